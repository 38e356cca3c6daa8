/**
 * A private PostgreSQL for the tests, from Debian's binaries (`/usr/lib/postgresql/<v>/bin`): a cluster made by
 * `initdb` in a temporary folder owned by the `postgres` user (the tests run as root, and the server refuses root),
 * on a free loopback port, no fsync, stopped and removed after the file. Each test takes a schema of its own
 * (`freshSchema`), so one server serves a whole file cheaply. Without the binaries the Postgres tests skip with a
 * notice, unless AGENTD_REQUIRE_POSTGRES=1 (CI), where their absence is a failure.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { vi } from 'vitest';
import { freePort, requiredOrSkipped } from './system-program.ts';
import { PATIENT } from './wait.ts';

/** The folder of the newest installed server's binaries, or undefined. */
function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Whether a private server can be started here; says why not (or fails under AGENTD_REQUIRE_POSTGRES=1). */
export function hasPostgres(): boolean {
  const runuser = spawnSync('runuser', ['--help']).status === 0;
  const user = spawnSync('id', ['-u', 'postgres']).status === 0;
  const message =
    'PostgreSQL (initdb, pg_ctl, the postgres user) not found; install it with: apt-get install -y postgresql';
  return requiredOrSkipped(binDir() !== undefined && runuser && user, 'postgres', message, 'AGENTD_REQUIRE_POSTGRES');
}

export interface PostgresServer {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres` (password authentication on TCP). */
  url: string;
  port: number;
  password: string;
  /** The URL of database `db` on this server. */
  urlOf(db: string): string;
  /** A new empty schema in the `postgres` database, for one test. */
  freshSchema(): Promise<string>;
  /** Runs one statement as the superuser (test set-up). */
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  /** `pg_ctl stop -m immediate` (a crash: no checkpoint), then later `start()` again on the same port and data. */
  crash(): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The server's settings for tests: loopback only, no fsync (a crash of the machine loses nothing a test needs). */
const SETTINGS = '-c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200';

/** Runs a server binary as the postgres user. */
const asPostgres = (bin: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'pipe', timeout: 120_000 });

/** Starts a private server; `stop()` removes it. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'agentd-pg-'));
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
  const data = join(dir, 'data');
  const password = randomUUID();
  const pwfile = join(dir, 'pw');
  execFileSync('runuser', [
    '-u',
    'postgres',
    '--',
    'sh',
    '-c',
    `umask 077; printf %s "$1" > "$2"`,
    'sh',
    password,
    pwfile,
  ]);
  asPostgres(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--pwfile',
    pwfile,
    '-A',
    'scram-sha-256',
    '-E',
    'UTF8',
    '--locale=C',
    '-N',
  ]);
  const pgCtl = (args: string[]) => asPostgres(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const launch = (at: number) => pgCtl(['-o', `-p ${at} -k ${dir} ${SETTINGS}`, '-l', join(dir, 'log'), '-w', 'start']);
  // Postgres takes no port 0: a free one is picked, and another when it was taken before the server bound it.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      launch(port);
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
  const urlOf = (db: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${db}`;
  const url = urlOf('postgres');
  /** Resolves once the server answers a query. */
  const answering = () =>
    vi.waitFor(async () => {
      const probe = new pg.Client({ connectionString: url });
      try {
        await probe.connect();
        await probe.query('SELECT 1');
      } finally {
        await probe.end().catch(() => undefined);
      }
    }, PATIENT);
  const start = async () => {
    launch(port);
    await answering();
  };
  await answering();
  const query = async (text: string, values?: unknown[]) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  };
  return {
    url,
    port,
    password,
    urlOf,
    query,
    async freshSchema() {
      const name = `t_${randomUUID().replaceAll('-', '')}`;
      await query(`CREATE SCHEMA ${name}`);
      return name;
    },
    crash: () => void pgCtl(['-m', 'immediate', 'stop']),
    start,
    stop() {
      try {
        pgCtl(['-m', 'fast', 'stop']);
      } catch {
        // stopped already (a test crashed it)
      }
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}
