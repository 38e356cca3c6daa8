import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSetpriv, resolveCommand, withParentDeathSignal } from '../../src/tools/spawn/parent-death.ts';

const SETPRIV = '/usr/bin/setpriv';

describe('resolveCommand', () => {
  it('finds a command on the given PATH, or a path relative to cwd, only when it is an executable file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-resolve-'));
    await writeFile(join(dir, 'srv'), '#!/bin/sh\n');
    await chmod(join(dir, 'srv'), 0o755);
    await writeFile(join(dir, 'plain'), '');
    await mkdir(join(dir, 'sub'));
    expect(resolveCommand('srv', `/nonexistent:${dir}`)).toBe(join(dir, 'srv'));
    expect(resolveCommand('./srv', undefined, dir)).toBe(join(dir, 'srv'));
    expect(resolveCommand('plain', dir)).toBeUndefined(); // not executable
    expect(resolveCommand('sub', dir)).toBeUndefined(); // a directory
    expect(resolveCommand('srv', '/nonexistent')).toBeUndefined();
    expect(resolveCommand('agentd-no-such-command', process.env.PATH)).toBeUndefined();
  });
});

describe('withParentDeathSignal', () => {
  it('wraps a command that resolves, and leaves alone one that does not or when there is no setpriv', () => {
    const path = process.env.PATH;
    expect(withParentDeathSignal({ command: 'sh', args: ['-c', 'x'] }, path, undefined, SETPRIV)).toEqual({
      command: SETPRIV,
      args: ['--pdeathsig', 'KILL', '--', 'sh', '-c', 'x'],
    });
    expect(withParentDeathSignal({ command: 'agentd-no-such-command', args: [] }, path, undefined, SETPRIV)).toEqual({
      command: 'agentd-no-such-command',
      args: [],
    });
    expect(withParentDeathSignal({ command: 'sh', args: [] }, path, undefined, undefined)).toEqual({
      command: 'sh',
      args: [],
    });
  });

  it.runIf(process.platform === 'linux' && findSetpriv() !== undefined)(
    'runs the server as the spawned pid itself (setpriv execs)',
    async () => {
      const run = withParentDeathSignal(
        { command: 'sh', args: ['-c', 'echo $$'] },
        process.env.PATH,
        undefined,
        findSetpriv(),
      );
      expect(run.command).toBe(findSetpriv());
      const child = spawn(run.command, run.args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await once(child, 'exit');
      expect(out.trim()).toBe(String(child.pid));
    },
  );
});
