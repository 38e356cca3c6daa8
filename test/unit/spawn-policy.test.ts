/** The spawn policy of runtime connects, as a pure function: what may start and what is refused before anything runs. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';
import { isShared } from '../../src/config/shared.ts';
import { checkSpawn, programName, type SpawnPolicy, type SpawnRequest } from '../../src/tools/spawn/policy.ts';

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
 * Shared mode: the commands the agent file's own servers use (or allowedCommands) and nothing else;
 * interpreters only on scripts under the agent folder or node_modules; wrappers only when listed explicitly.
 * Every canary of the black-box run (issue 23) is here.
 */
describe('spawn policy of a shared service', () => {
  const root = mkdtempSync(join(tmpdir(), 'agentd-spawn-'));
  const agentDir = join(root, 'agent');
  const outside = join(root, 'outside');
  mkdirSync(join(agentDir, 'node_modules', 'x'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(agentDir, 'server.js'), '');
  writeFileSync(join(agentDir, 'start.sh'), '');
  writeFileSync(join(agentDir, 'node_modules', 'x', 'index.js'), '');
  writeFileSync(join(outside, 'x.js'), '');
  writeFileSync(join(outside, 'script.sh'), '');
  symlinkSync(join(outside, 'x.js'), join(agentDir, 'link.js'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  // The agent file runs `node`, `npx`, `npm`, `bash` and a binary: that is the default allowlist.
  const shared: SpawnPolicy = {
    shared: { agentDir, defaultCommands: ['node', 'npx', 'npm', '/opt/tools/mcp-server', 'bash'] },
  };
  const listing = (...allowedCommands: string[]): SpawnPolicy => ({ ...shared, allowedCommands });
  const at = (field: string, reason: string) => ({ code: 'INVALID_REQUEST', field, reason });

  it.each([
    ['node -pe', req('node', ['-pe', 'require("fs").writeFileSync("/tmp/c", "")']), at('config.args.0', 'inline_code')],
    ['node <file elsewhere>', req('node', [join(outside, 'x.js')]), at('config.args.0', 'script_outside')],
    [
      'node <a link out of the agent folder>',
      req('node', ['link.js'], {}, agentDir),
      at('config.args.0', 'script_outside'),
    ],
    ['node <a missing file>', req('node', [join(agentDir, 'nope.js')]), at('config.args.0', 'script_outside')],
    ['node with no script', req('node', ['--no-warnings']), at('config.command', 'script_outside')],
    [
      'npx node <file elsewhere>',
      req('npx', ['-y', 'node', join(outside, 'x.js')]),
      at('config.args.2', 'script_outside'),
    ],
    [
      'npx bash <file>',
      req('npx', ['-y', 'bash', join(agentDir, 'start.sh')]),
      at('config.args.1', 'wrapper_not_allowed'),
    ],
    ['env -S', req('env', ['-S', 'sh -c "touch /tmp/c"']), at('config.command', 'wrapper_not_allowed')],
    [
      'timeout before sh -c',
      req('timeout', ['5', 'sh', '-c', 'touch /tmp/c']),
      at('config.command', 'wrapper_not_allowed'),
    ],
    [
      'nice before sh -c',
      req('nice', ['-n', '5', 'sh', '-c', 'touch /tmp/c']),
      at('config.command', 'wrapper_not_allowed'),
    ],
    [
      'setsid before sh -c',
      req('/usr/bin/setsid', ['sh', '-c', 'touch /tmp/c']),
      at('config.command', 'wrapper_not_allowed'),
    ],
    ['awk BEGIN{system()}', req('awk', ['BEGIN{system("touch /tmp/c")}']), at('config.command', 'wrapper_not_allowed')],
    [
      'find -exec',
      req('find', ['/tmp', '-maxdepth', '0', '-exec', 'touch', '/tmp/c', ';']),
      at('config.command', 'wrapper_not_allowed'),
    ],
    [
      'tar --checkpoint-action',
      req('tar', ['--checkpoint=1', '--checkpoint-action=exec=touch /tmp/c', '-cf', '/dev/null', '/etc/hostname']),
      at('config.command', 'wrapper_not_allowed'),
    ],
    ['sh <file> (sh not listed)', req('sh', [join(outside, 'script.sh')]), at('config.command', 'wrapper_not_allowed')],
    [
      'bash <file> (bash only in the agent file, not listed explicitly)',
      req('bash', [join(agentDir, 'start.sh')]),
      at('config.command', 'wrapper_not_allowed'),
    ],
    ['xargs', req('xargs', ['touch']), at('config.command', 'wrapper_not_allowed')],
    [
      'npm run (a package script runs in a shell)',
      req('npm', ['run', 'start']),
      at('config.command', 'wrapper_not_allowed'),
    ],
    ['plain touch', req('touch', ['/tmp/c']), at('config.command', 'command_not_allowed')],
    ['plain cp', req('cp', ['/etc/hostname', '/tmp/c']), at('config.command', 'command_not_allowed')],
    [
      'python (not in the agent file)',
      req('python3', ['-m', 'http.server']),
      at('config.command', 'command_not_allowed'),
    ],
  ])('refuses %s', (_name, r, expected) => {
    expect(refusal(r, shared)).toEqual(expected);
  });

  it.each([
    ['npx -y @modelcontextprotocol/server-everything', req('npx', ['-y', '@modelcontextprotocol/server-everything'])],
    ['npm exec of a package', req('npm', ['exec', '--yes', '@modelcontextprotocol/server-everything'])],
    ['node <agent folder>/server.js', req('node', [join(agentDir, 'server.js')])],
    ['node server.js relative to cwd', req('/usr/bin/node', ['--max-old-space-size=256', 'server.js'], {}, agentDir)],
    ['node node_modules/x/index.js', req('node', ['node_modules/x/index.js'], {}, agentDir)],
    ['a binary of the agent file', req('/opt/tools/mcp-server', ['--config', 'x.toml'])],
  ])('lets %s start', (_name, r) => {
    expect(refusal(r, shared)).toBeUndefined();
  });

  it("with allowedCommands, uses that list instead of the agent file's commands", () => {
    expect(refusal(req('/opt/tools/other', []), listing('/opt/tools/other'))).toBeUndefined();
    expect(refusal(req('npx', ['-y', 'x']), listing('/opt/tools/other'))).toEqual(
      at('config.command', 'command_not_allowed'),
    );
  });

  it('starts a wrapper listed explicitly; a listed shell still runs only a script under the agent folder, never -c', () => {
    expect(refusal(req('timeout', ['5', 'node', 'x']), listing('timeout', 'node'))).toBeUndefined();
    expect(refusal(req('sh', [join(agentDir, 'start.sh')]), listing('sh'))).toBeUndefined();
    expect(refusal(req('sh', [join(outside, 'script.sh')]), listing('sh'))).toEqual(
      at('config.args.0', 'script_outside'),
    );
    expect(refusal(req('sh', ['-c', 'touch /tmp/c']), listing('sh'))).toEqual(at('config.args.0', 'inline_code'));
    expect(refusal(req('sh', ['-s']), listing('sh'))).toEqual(at('config.command', 'script_outside'));
  });

  it('checks what a listed env starts against the same rules', () => {
    expect(
      refusal(req('env', ['DEBUG=1', 'node', join(agentDir, 'server.js')]), listing('env', 'node')),
    ).toBeUndefined();
    expect(refusal(req('env', ['DEBUG=1', 'touch', '/tmp/c']), listing('env', 'node'))).toEqual(
      at('config.args.1', 'command_not_allowed'),
    );
    expect(refusal(req('env', ['node', join(outside, 'x.js')]), listing('env', 'node'))).toEqual(
      at('config.args.1', 'script_outside'),
    );
  });

  it('refuses python -m (a module, not a script file) and runs a script under the agent folder', () => {
    writeFileSync(join(agentDir, 'server.py'), '');
    expect(refusal(req('python3', ['-m', 'http.server']), listing('python3'))).toEqual(
      at('config.args.0', 'script_outside'),
    );
    expect(refusal(req('python3', ['-u', join(agentDir, 'server.py')]), listing('python3'))).toBeUndefined();
  });

  it('says which config key to set', () => {
    const message = (r: SpawnRequest) => {
      try {
        checkSpawn(r, shared);
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    expect(message(req('touch', ['/tmp/c']))).toMatch(/add it to server\.mcp\.allowedCommands/);
    expect(message(req('timeout', ['5', 'x']))).toMatch(/server\.mcp\.allowedCommands lists it explicitly/);
    expect(message(req('node', [join(outside, 'x.js')]))).toMatch(/agent file's folder/);
  });

  it("keeps today's results when not shared", () => {
    for (const r of [
      req('touch', ['/tmp/c']),
      req('timeout', ['5', 'sh', '-c', 'x']),
      req('node', [join(outside, 'x.js')]),
      req('awk', ['BEGIN{}']),
    ]) {
      expect(refusal(r)).toBeUndefined();
    }
  });
});

/**
 * `node` (any interpreter) on a shared service runs a package's declared bin entry point or a file under the agent
 * folder, not any script under node_modules; a bin of a program the rules know (npm, npx, tsx) is read as that program.
 */
describe("spawn policy of a shared service: packages' bins", () => {
  const root = mkdtempSync(join(tmpdir(), 'agentd-bins-'));
  const agentDir = join(root, 'agent');
  const global = join(root, 'lib', 'node_modules'); // a global install's folder: outside the agent folder
  const file = (path: string, text = '') => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  };
  const manifest = (dir: string, value: object) => file(join(dir, 'package.json'), JSON.stringify(value));
  mkdirSync(agentDir, { recursive: true });
  file(join(agentDir, 'server.ts'));
  // A package with an object bin, a script that is not one, and a nameless dist/package.json (a type marker).
  const binpkg = join(global, 'binpkg');
  manifest(binpkg, { name: 'binpkg', bin: { 'bin-server': 'bin/server.js', 'bin-cli': './dist/cli.mjs' } });
  file(join(binpkg, 'bin', 'server.js'));
  file(join(binpkg, 'lib', 'other.js'));
  manifest(join(binpkg, 'dist'), { type: 'module' });
  file(join(binpkg, 'dist', 'cli.mjs'));
  file(join(binpkg, 'dist', 'inner.mjs'));
  // A scoped package whose bin is a string (named after the package without its scope).
  const strbin = join(global, '@scope', 'strbin');
  manifest(strbin, { name: '@scope/strbin', bin: 'cli.js' });
  file(join(strbin, 'cli.js'));
  // npm and tsx as they are installed.
  const npm = join(global, 'npm');
  manifest(npm, { name: 'npm', bin: { npm: 'bin/npm-cli.js', npx: 'bin/npx-cli.js' } });
  file(join(npm, 'bin', 'npm-cli.js'));
  file(join(npm, 'bin', 'npx-cli.js'));
  const tsx = join(global, 'tsx');
  manifest(tsx, { name: 'tsx', bin: './dist/cli.mjs' });
  file(join(tsx, 'dist', 'cli.mjs'));
  mkdirSync(join(global, '.bin'));
  symlinkSync('../binpkg/bin/server.js', join(global, '.bin', 'bin-server'));
  symlinkSync('lib/node_modules/npm/bin/npm-cli.js', join(root, 'npm-link')); // as /usr/bin/npm
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const policy = (...allowedCommands: string[]): SpawnPolicy => ({
    shared: { agentDir, defaultCommands: ['node', 'npm', 'npx'] },
    ...(allowedCommands.length > 0 && { allowedCommands }),
  });
  const at = (field: string, reason: string) => ({ code: 'INVALID_REQUEST', field, reason });

  it.each([
    ['a declared bin outside the agent folder', req('node', [join(binpkg, 'bin', 'server.js'), '--stdio'])],
    ['a declared bin through node_modules/.bin (a link)', req('node', ['.bin/bin-server'], {}, global)],
    [
      'a bin under a nameless dist/package.json, declared by the package',
      req('node', [join(binpkg, 'dist', 'cli.mjs')]),
    ],
    ["a scoped package's string bin", req('node', [join(strbin, 'cli.js')])],
    [
      "npm's bin running a package (npm allowed)",
      req('node', [join(npm, 'bin', 'npm-cli.js'), 'exec', '--yes', 'some-mcp-server']),
    ],
    ["npm's bin through a link", req('node', [join(root, 'npm-link'), 'exec', '--', 'some-mcp-server'])],
    ['a file under the agent folder', req('node', [join(agentDir, 'server.ts')])],
  ])('lets node run %s', (_name, r) => {
    expect(refusal(r, policy())).toBeUndefined();
  });

  it.each([
    [
      'a script under node_modules that is no bin',
      req('node', [join(binpkg, 'lib', 'other.js')]),
      at('config.args.0', 'script_outside'),
    ],
    ['a module beside a bin', req('node', [join(binpkg, 'dist', 'inner.mjs')]), at('config.args.0', 'script_outside')],
    ["a package's manifest", req('node', [join(binpkg, 'package.json')]), at('config.args.0', 'script_outside')],
    [
      'npm-cli.js exec -c',
      req('node', [join(npm, 'bin', 'npm-cli.js'), 'exec', '-c', 'touch /tmp/c']),
      at('config.args.2', 'inline_code'),
    ],
    [
      'npm-cli.js (linked) --yes exec --call=',
      req('node', [join(root, 'npm-link'), '--yes', 'exec', '--call=touch /tmp/c']),
      at('config.args.3', 'inline_code'),
    ],
    [
      'npx-cli.js -c',
      req('node', [join(npm, 'bin', 'npx-cli.js'), '-c', 'touch /tmp/c']),
      at('config.args.1', 'inline_code'),
    ],
    [
      "tsx's cli -e",
      req('node', [join(tsx, 'dist', 'cli.mjs'), '-e', 'process.exit()']),
      at('config.args.1', 'inline_code'),
    ],
    [
      "tsx's cli --eval after a flag",
      req('node', ['--no-warnings', join(tsx, 'dist', 'cli.mjs'), '--tsconfig', 'x.json', '--eval', '1']),
      at('config.args.4', 'inline_code'),
    ],
    [
      "tsx's cli (tsx not allowed)",
      req('node', [join(tsx, 'dist', 'cli.mjs'), join(agentDir, 'server.ts')]),
      at('config.args.0', 'command_not_allowed'),
    ],
    [
      "npx's bin (npx not allowed)",
      req('node', [join(npm, 'bin', 'npx-cli.js'), '-y', 'any-package']),
      at('config.args.0', 'command_not_allowed'),
    ],
    [
      'npx node <a script under node_modules that is no bin>',
      req('npx', ['-y', 'node', join(binpkg, 'lib', 'other.js')]),
      at('config.args.2', 'script_outside'),
    ],
  ])('refuses node on %s', (_name, r, expected) => {
    expect(refusal(r, _name.includes('not allowed') ? policy('node') : policy())).toEqual(expected);
  });

  it("reads tsx's bin as tsx when tsx is allowed: its script passes the same rules", () => {
    expect(
      refusal(req('node', [join(tsx, 'dist', 'cli.mjs'), join(agentDir, 'server.ts')]), policy('node', 'tsx')),
    ).toBeUndefined();
    expect(
      refusal(req('node', [join(tsx, 'dist', 'cli.mjs'), join(binpkg, 'lib', 'other.js')]), policy('node', 'tsx')),
    ).toEqual(at('config.args.1', 'script_outside'));
  });

  it("refuses inline code through a program's bin when not shared too (the deny-list)", () => {
    expect(refusal(req('node', [join(npm, 'bin', 'npm-cli.js'), 'exec', '-c', 'id']))).toEqual(
      at('config.args.2', 'inline_code'),
    );
    expect(refusal(req('node', [join(tsx, 'dist', 'cli.mjs'), '-e', '1']))).toEqual(at('config.args.1', 'inline_code'));
    expect(refusal(req('node', [join(binpkg, 'lib', 'other.js')]))).toBeUndefined(); // not shared: any script
  });

  it('says what a shared service runs', () => {
    try {
      checkSpawn(req('node', [join(binpkg, 'lib', 'other.js')]), policy());
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).toMatch(
        /neither a package's declared bin entry point nor a file under the agent file's folder/,
      );
    }
  });
});
