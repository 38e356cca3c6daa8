/**
 * README.md's Install and Set up commands, run as written (`npx tsx tools/ci/readme-lines.ts`; .ci/run's stage
 * "the README's Install and Set up lines"): a fresh clone of this repository's committed HEAD (`<this repository>`
 * in the README), a fresh HOME and npm prefix (so `npm install -g` and `agentd` are the README's, not the machine's),
 * the machine's npm cache and global npmrc (the npm registry is the only network the commands need; everything they
 * serve is on loopback). Commands run one after the other in bash, each from the folder the one before ended in (`cd` carries
 * over, variables do not). A command that keeps running and prints a loopback URL is a service: it passes once that
 * URL's `GET /api/health/ready` answers 200, and is then stopped (its process group is sent SIGTERM). Any other
 * command passes when it exits 0. The first that fails ends the run (exit 1) with its README line, the command and
 * its last output lines. `--repo DIR` clones DIR instead; `--keep` leaves the run's folder for a look.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readmeCommands, type ReadmeCommand } from './readme-commands.ts';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '../..');
/** The README's stand-in for the repository's address. */
const THIS_REPOSITORY = '<this repository>';
/** Longest one command may take (a cold `npm ci`, a pack and a global install included). */
const COMMAND_TIMEOUT_MS = 15 * 60_000;
const LOOPBACK_URL = /http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):\d+/g;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

interface Outcome {
  ok: boolean;
  how: string;
}

/** How this machine reaches the npm registry: its proxy and CA variables (its npmrc files are read by npm). */
const NETWORK_VARS = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];

const npmConfig = (key: string) => spawnSync('npm', ['config', 'get', key], { encoding: 'utf8' }).stdout.trim();

/**
 * A fresh HOME, npm prefix and temporary folder; the machine's npm cache and its global npmrc (which a fresh prefix
 * would otherwise move: the registry's CA file may be there).
 */
function freshEnv(base: string): NodeJS.ProcessEnv {
  const [home, prefix, tmp] = [join(base, 'home'), join(base, 'prefix'), join(base, 'tmp')] as const;
  for (const dir of [home, prefix, tmp]) mkdirSync(dir, { recursive: true });
  const [cache, globalconfig] = [npmConfig('cache'), npmConfig('globalconfig')];
  const network = NETWORK_VARS.filter((name) => process.env[name] !== undefined);
  return {
    ...Object.fromEntries(network.map((name) => [name, process.env[name]])),
    ...(process.env.NODE_EXTRA_CA_CERTS && { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }),
    PATH: [join(prefix, 'bin'), dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: home,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    npm_config_prefix: prefix,
    ...(cache && { npm_config_cache: cache }),
    ...(globalconfig && { npm_config_globalconfig: globalconfig }),
  };
}

async function healthReady(origin: string): Promise<boolean> {
  try {
    const res = await fetch(`${origin}/api/health/ready`, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Runs one command in bash from `cwd`; the folder it ended in is written to `cwdFile`. */
function runCommand(command: string, cwd: string, env: NodeJS.ProcessEnv, cwdFile: string): Promise<Outcome> {
  const script = `${command}\n__readme_rc=$?\npwd >'${cwdFile}'\nexit $__readme_rc\n`;
  const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-64 * 1024);
    process.stdout.write(text.replace(/^(?=.)/gm, '   | '));
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group is gone
    }
  };
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  return new Promise<Outcome>((settle) => {
    const watch = setInterval(() => {
      const origins = new Set(output.replace(ANSI, '').match(LOOPBACK_URL) ?? []);
      void Promise.all([...origins].map(async (o) => ((await healthReady(o)) ? o : undefined))).then((ready) => {
        const origin = ready.find((o) => o !== undefined);
        if (origin !== undefined) settle({ ok: true, how: `served ${origin}: ready, stopped` });
      });
    }, 500);
    const deadline = setTimeout(
      () => settle({ ok: false, how: `still running after ${COMMAND_TIMEOUT_MS} ms` }),
      COMMAND_TIMEOUT_MS,
    );
    void exited.then((code) => settle(code === 0 ? { ok: true, how: 'exit 0' } : { ok: false, how: `exit ${code}` }));
    void exited.finally(() => [clearInterval(watch), clearTimeout(deadline)]);
  }).then(async (outcome) => {
    group('SIGTERM');
    const kill = setTimeout(() => group('SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
    if (output !== '' && !output.endsWith('\n')) process.stdout.write('\n');
    return outcome.ok ? outcome : { ok: false, how: `${outcome.how}\n${lastLines(output, 30)}` };
  });
}

const lastLines = (text: string, n: number) => text.replace(ANSI, '').trimEnd().split('\n').slice(-n).join('\n');

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { repo: { type: 'string' }, keep: { type: 'boolean' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(`${readFileSync(new URL(import.meta.url), 'utf8').split('*/')[0]}*/\n`);
    return;
  }
  const repo = resolve(values.repo ?? ROOT);
  const commands = readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const base = mkdtempSync(join(tmpdir(), 'agentd-readme-'));
  const env = freshEnv(base);
  const cwdFile = join(base, 'cwd');
  let cwd = join(base, 'work');
  mkdirSync(cwd);
  process.stdout.write(`README.md's ${commands.length} commands, in ${base} (HOME and npm prefix fresh)\n`);
  let failed: { at: ReadmeCommand; how: string } | undefined;
  try {
    for (const at of commands) {
      process.stdout.write(`\n== README.md:${at.line} (${at.section}): ${at.command}\n`);
      const outcome = await runCommand(at.command.replaceAll(THIS_REPOSITORY, repo), cwd, env, cwdFile);
      if (!outcome.ok) {
        failed = { at, how: outcome.how };
        break;
      }
      process.stdout.write(`   ok: ${outcome.how}\n`);
      cwd = readFileSync(cwdFile, { encoding: 'utf8', flag: 'a+' }).trim() || cwd; // a stopped service wrote none
    }
  } finally {
    if (!values.keep) rmSync(base, { recursive: true, force: true });
  }
  if (failed) {
    process.stderr.write(`\nREADME.md:${failed.at.line}: \`${failed.at.command}\` failed: ${failed.how}\n`);
    process.exit(1);
  }
  const sections = [...new Set(commands.map((c) => `"## ${c.section}"`))].join(' and ');
  process.stdout.write(`\nREADME.md's ${commands.length} commands of ${sections} ran as written\n`);
}

await main();
