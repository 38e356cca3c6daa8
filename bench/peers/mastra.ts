/**
 * The peer: the Mastra app of bench/peers/mastra-app/ (versions pinned by its package.json and lock
 * file) copied into a scratch folder, installed with `npm ci` from the npm registry (no install
 * scripts), bundled by its `npm run build`, and run as `node dist/server.mjs` on loopback. The
 * folder is removed when the bench exits; npm runs in a process group of its own, killed whole if
 * the bench stops meanwhile.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, openSync, closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, scratchDir, spawnNode, track, type Child } from '../lib/procs.ts';

const APP = join(ROOT, 'bench/peers/mastra-app');
const APP_FILES = ['package.json', 'package-lock.json', 'server.mjs', 'build.mjs'];
/** The packages whose versions a result names. */
const PACKAGES = ['@mastra/core', '@mastra/hono', '@mastra/server', 'hono', '@hono/node-server'] as const;

export type MastraVersions = Record<(typeof PACKAGES)[number], string>;

export interface MastraApp {
  dir: string;
  versions: MastraVersions;
}

export interface MastraServer extends Child {
  url: string;
  port: number;
}

/** Runs a command to its end in a process group of its own; rejects with the end of its output when it fails or overstays. */
export async function runCommand(command: string, args: string[], cwd: string, timeoutMs: number): Promise<void> {
  const logFile = join(scratchDir('cmd'), 'out.log');
  const fd = openSync(logFile, 'w');
  const proc = spawn(command, args, { cwd, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = track(proc, true);
  const timer = setTimeout(() => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }, timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  if (code !== 0) {
    const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) ${code === null ? `killed after ${timeoutMs / 1000} s` : `exited with ${code}`}:\n${tail}`,
    );
  }
}

/** Installs and builds the Mastra app in a scratch folder. */
export async function installMastra(): Promise<MastraApp> {
  const dir = scratchDir('mastra');
  for (const file of APP_FILES) copyFileSync(join(APP, file), join(dir, file));
  await runCommand('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], dir, 5 * 60_000);
  await runCommand('npm', ['run', '--silent', 'build'], dir, 2 * 60_000);
  const version = (name: string) =>
    (JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  const versions = Object.fromEntries(PACKAGES.map((name) => [name, version(name)])) as MastraVersions;
  return { dir, versions };
}

/**
 * `node dist/server.mjs` of an installed app, pinned to `cpus`, on the model at `modelUrl`. Mastra's
 * telemetry, model-registry refresh and home folder stay off and inside the scratch folder.
 */
export async function startMastra(app: MastraApp, modelUrl: string, cpus: string): Promise<MastraServer> {
  const { child, value } = await spawnNode('mastra', join(app.dir, 'dist/server.mjs'), [], {
    cwd: app.dir,
    cpus,
    env: {
      MODEL_URL: modelUrl,
      PORT: '0',
      NODE_ENV: 'production',
      HOME: app.dir,
      MASTRA_TELEMETRY_DISABLED: '1',
      MASTRA_OFFLINE: '1',
      MASTRA_AUTO_REFRESH_PROVIDERS: 'false',
    },
    ready: (line) => /listening on (http:\/\/\S+)/.exec(line)?.[1],
    timeoutMs: 60_000,
  });
  return { ...child, url: value, port: Number(new URL(value).port) };
}
