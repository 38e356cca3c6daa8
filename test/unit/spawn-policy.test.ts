/** The spawn policy of runtime connects, as a pure function: what may start and what is refused before anything runs. */
import { describe, expect, it } from 'vitest';
import { checkSpawn, programName, type SpawnRequest } from '../../src/tools/spawn-policy.ts';

const req = (command: string, args: string[] = [], env: Record<string, string> = {}, cwd?: string): SpawnRequest => ({ command, args, env, ...(cwd && { cwd }) });
const refusal = (r: SpawnRequest, policy = {}) => {
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
    ['perl -e', req('perl', ['-e', 'print 1']), 'config.args.0'],
  ])('refuses %s as inline code', (_name, r, field) => {
    expect(refusal(r)).toEqual({ code: 'INVALID_REQUEST', field, reason: 'inline_code' });
  });

  it.each(['NODE_OPTIONS', 'LD_PRELOAD', 'DYLD_INSERT_LIBRARIES', 'PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'BASH_ENV', 'ENV', 'npm_config_script_shell', 'NPM_CONFIG_PREFIX', 'JAVA_TOOL_OPTIONS'])(
    'refuses the loader env key %s',
    (key) => {
      expect(refusal(req('node', ['s.js'], { [key]: '--require ./evil.js' }))).toEqual({ code: 'INVALID_REQUEST', field: `config.env.${key}`, reason: 'loader_env' });
    },
  );

  it('refuses a loader key set through an env launcher', () => {
    expect(refusal(req('env', ['NODE_OPTIONS=--require=x', 'node', 's.js']))).toEqual({ code: 'INVALID_REQUEST', field: 'config.args.0', reason: 'loader_env' });
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
    expect(refusal(req('mcp-server'), policy)).toEqual({ code: 'INVALID_REQUEST', field: 'config.command', reason: 'command_not_allowed' });
    expect(refusal(req('python3', ['-m', 'x']), policy)).toMatchObject({ reason: 'command_not_allowed' });
  });

  it('names programs by file name, without versions or .exe', () => {
    expect(['/usr/bin/python3.11', 'NODE.EXE', 'nodejs', 'pypy3'].map(programName)).toEqual(['python', 'node', 'node', 'pypy']);
  });
});
