/**
 * Runtime connects on a shared service (an API key, or a non-loopback bind) through the real server:
 * only the agent file's own commands (or server.mcp.allowedCommands) start, interpreters only on scripts
 * under the agent folder or packages' declared bins (not any script under node_modules, and a bin of npm or
 * tsx read as that program: no `npm-cli.js exec -c`, no `tsx -e`), wrappers only when listed explicitly. Each canary of the
 * black-box run (issue 23) would leave its marker file behind if it ran; a refusal never spawns, so the
 * marker is checked right after the 400.
 */
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appPool, type RunningApp } from '../support/start-app.ts';
import { EVERYTHING, ROOT, fixturePath } from '../support/paths.ts';
import { resolveCommand } from '../../src/tools/spawn/parent-death.ts';

const KEY = 'shared-service-key-0123456789';
/** The agent file's folder: the fixtures, so the echo server is "a server in the agent folder". */
const agentDir = dirname(fixturePath('echo-server'));
const node = process.execPath;

let tmp: string;
const marker = (n: number) => join(tmp, `canary-${n}`);
const writeMarker = (n: number) => `require('fs').writeFileSync(${JSON.stringify(marker(n))}, 'ran')`;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'agentd-shared-'));
  await writeFile(join(tmp, 'source'), 'x');
  await writeFile(join(tmp, 'canary-4.js'), writeMarker(4));
  await writeFile(join(tmp, 'canary-12.sh'), `touch ${marker(12)}\n`);
  await writeFile(join(tmp, 'canary-15.sh'), `touch ${marker(15)}\n`);
  // A package under node_modules: its declared bin is not the canary beside it.
  await mkdir(join(tmp, 'node_modules', 'pkg', 'lib'), { recursive: true });
  await writeFile(
    join(tmp, 'node_modules', 'pkg', 'package.json'),
    JSON.stringify({ name: 'pkg', bin: { pkg: 'bin.js' } }),
  );
  await writeFile(join(tmp, 'node_modules', 'pkg', 'bin.js'), '');
  await writeFile(join(tmp, 'node_modules', 'pkg', 'lib', 'canary-17.js'), writeMarker(17));
});

/** The global npm's own script (`npm` on the PATH, links followed), when there is one. */
const npmCli = (() => {
  const npm = resolveCommand('npm', process.env.PATH);
  return npm && realpathSync(npm).endsWith('npm-cli.js') ? realpathSync(npm) : undefined;
})();
/** The checkout's tsx, as `node_modules/.bin/tsx` points at it. */
const tsxCli = realpathSync(join(ROOT, 'node_modules', '.bin', 'tsx'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

async function connect(svc: RunningApp, name: string, config: unknown, key: string | undefined = KEY) {
  const res = await fetch(`${svc.url}/api/connect-server`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key && { Authorization: `Bearer ${key}` }) },
    body: JSON.stringify({ name, config }),
  });
  return {
    status: res.status,
    body: (await res.json()) as {
      error?: { code: string; message: string; details: Record<string, unknown> };
      server?: { status: string };
    },
  };
}

const stdio = (command: string, args: string[], extra: Record<string, unknown> = {}) => ({
  type: 'stdio',
  command,
  args,
  timeout: 10_000,
  ...extra,
});
/** A canary: its number (its marker), what it tries, its config, and the refusal's field and reason. */
type Canary = [number, string, () => ReturnType<typeof stdio>, string, string];
/** The agent file's own server: its command (this node) is the default allowlist. */
const agentFile = (server: Record<string, unknown> = {}) => ({
  server: { auth: { keys: [{ name: 'ops', key: KEY, scopes: ['admin'] }] }, ...server },
  mcpServers: { echo: stdio(node, [fixturePath('echo-server')]) },
});

const pool = appPool();
afterAll(() => pool.stopAll());

describe('runtime connect on a shared service (an admin key)', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await pool.start(agentFile(), { deps: { agentDir } });
  });

  it.each<Canary>([
    [1, 'touch', () => stdio('touch', [marker(1)]), 'config.command', 'command_not_allowed'],
    [2, 'cp', () => stdio('cp', [join(tmp, 'source'), marker(2)]), 'config.command', 'command_not_allowed'],
    [3, 'node -pe', () => stdio(node, ['-pe', writeMarker(3)]), 'config.args.0', 'inline_code'],
    [
      4,
      'node <file outside the agent folder>',
      () => stdio(node, [join(tmp, 'canary-4.js')]),
      'config.args.0',
      'script_outside',
    ],
    [5, 'env -S', () => stdio('env', ['-S', `sh -c "touch ${marker(5)}"`]), 'config.command', 'wrapper_not_allowed'],
    [
      6,
      'timeout before sh -c',
      () => stdio('timeout', ['5', 'sh', '-c', `touch ${marker(6)}`]),
      'config.command',
      'wrapper_not_allowed',
    ],
    [
      7,
      'nice before sh -c',
      () => stdio('nice', ['sh', '-c', `touch ${marker(7)}`]),
      'config.command',
      'wrapper_not_allowed',
    ],
    [
      8,
      'setsid before sh -c',
      () => stdio('setsid', ['sh', '-c', `touch ${marker(8)}`]),
      'config.command',
      'wrapper_not_allowed',
    ],
    [
      9,
      "awk 'BEGIN{system()}'",
      () => stdio('awk', [`BEGIN{system("touch ${marker(9)}")}`]),
      'config.command',
      'wrapper_not_allowed',
    ],
    [
      10,
      'find -exec',
      () => stdio('find', [tmp, '-maxdepth', '0', '-exec', 'touch', marker(10), ';']),
      'config.command',
      'wrapper_not_allowed',
    ],
    [
      11,
      'tar --checkpoint-action',
      () =>
        stdio('tar', [
          '--checkpoint=1',
          `--checkpoint-action=exec=touch ${marker(11)}`,
          '-cf',
          '/dev/null',
          join(tmp, 'source'),
        ]),
      'config.command',
      'wrapper_not_allowed',
    ],
    [12, 'sh <file>', () => stdio('sh', [join(tmp, 'canary-12.sh')]), 'config.command', 'wrapper_not_allowed'],
    [
      13,
      'npx node <file outside>',
      () => stdio('npx', ['-y', 'node', join(tmp, 'canary-4.js')]),
      'config.command',
      'command_not_allowed',
    ],
    [
      14,
      'node --require=<preload>',
      () => stdio(node, [`--require=${join(tmp, 'canary-4.js')}`, fixturePath('echo-server')]),
      'config.args.0',
      'inline_code',
    ],
    [
      17,
      'node <a script under node_modules that is no bin>',
      () => stdio(node, [join(tmp, 'node_modules', 'pkg', 'lib', 'canary-17.js')]),
      'config.args.0',
      'script_outside',
    ],
    [
      18,
      "node <the checkout's tsx> -e",
      () => stdio(node, [tsxCli, '-e', writeMarker(18)]),
      'config.args.1',
      'inline_code',
    ],
    [
      19,
      'node --import=data:',
      () =>
        stdio(node, [
          `--import=data:text/javascript,${encodeURIComponent(writeMarker(19))}`,
          fixturePath('echo-server'),
        ]),
      'config.args.0',
      'inline_code',
    ],
    ...(npmCli
      ? [
          [
            20,
            "node <the global npm's npm-cli.js> exec -c",
            () => stdio(node, [npmCli, 'exec', '-c', `touch ${marker(20)}`]),
            'config.args.2',
            'inline_code',
          ] satisfies Canary,
        ]
      : []),
  ])('canary %i (%s): 400 with the reason, and nothing ran', async (n, _name, config, field, reason) => {
    const res = await connect(svc, `canary-${n}`, config());
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason } });
    expect(res.body.error?.message).toMatch(/server\.mcp\.allowedCommands|agent file's (folder|mcpServers)/);
    expect(existsSync(marker(n))).toBe(false);
    expect(existsSync(marker(4))).toBe(false);
  });

  it("connects a server in the agent folder, and a package's declared bin under node_modules", async () => {
    const echo = await connect(svc, 'echo-again', stdio(node, [fixturePath('echo-server')]));
    expect(echo.status).toBe(200);
    expect(echo.body.server?.status).toBe('connected');
    const everything = await connect(
      svc,
      'everything',
      stdio(node, [EVERYTHING.slice(ROOT.length), 'stdio'], { cwd: ROOT }),
    );
    expect(everything.status).toBe(200);
  });
});

describe('runtime connect on a shared service with allowedCommands', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await pool.start(agentFile({ mcp: { allowedCommands: [node, 'sh'] } }), { deps: { agentDir } });
  });

  it('starts a listed shell only on a script under the agent folder, and never with -c', async () => {
    const outside = await connect(svc, 'sh-file', stdio('sh', [join(tmp, 'canary-15.sh')]));
    expect(outside.body.error?.details).toEqual({ field: 'config.args.0', reason: 'script_outside' });
    const inline = await connect(svc, 'sh-c', stdio('sh', ['-c', `touch ${marker(15)}`]));
    expect(inline.body.error?.details).toEqual({ field: 'config.args.0', reason: 'inline_code' });
    expect(existsSync(marker(15))).toBe(false);
  });
});

describe('runtime connect on a non-loopback bind without keys', () => {
  it('is shared too: a command the agent file does not use is refused', async () => {
    // Listens on loopback (no test leaves 127.0.0.0/8); told it binds 0.0.0.0, as `--host 0.0.0.0` would.
    const svc = await pool.start({ mcpServers: agentFile().mcpServers }, { deps: { agentDir, bindHost: '0.0.0.0' } });
    const res = await connect(svc, 'canary-16', stdio('touch', [marker(16)]), undefined);
    expect(res.body.error?.details).toEqual({ field: 'config.command', reason: 'command_not_allowed' });
    expect(existsSync(marker(16))).toBe(false);
  });
});
