/**
 * Runtime connects through the real server: the spawn policy refuses before anything runs (the
 * canaries below would leave a file behind if they ran), allowedCommands narrows what may run,
 * and runtimeConnect: false turns the endpoint off.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/messaging.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { fixturePath } from './mcp-helpers.ts';

let dir: string;
let canary: string;
let preload: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentd-canary-'));
  canary = join(dir, 'ran');
  preload = join(dir, 'preload.cjs');
  await writeFile(preload, `require('fs').writeFileSync(${JSON.stringify(canary)}, 'preload ran')`);
});

const connect = (svc: RunningApp, name: string, config: unknown) =>
  api(svc.url, 'POST', '/api/connect-server', { name, config });

describe('runtime connect: spawn policy', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp({});
  });
  afterAll(() => svc.stop());

  it.each([
    [
      'bash -c',
      () => ({ type: 'stdio', command: 'bash', args: ['-c', `touch ${canary}`] }),
      'config.args.0',
      'inline_code',
    ],
    [
      'node -e',
      () => ({
        type: 'stdio',
        command: process.execPath,
        args: ['-e', `require('fs').writeFileSync(${JSON.stringify(canary)}, '')`],
      }),
      'config.args.0',
      'inline_code',
    ],
    [
      'npx -c',
      () => ({ type: 'stdio', command: 'npx', args: ['-c', `touch ${canary}`] }),
      'config.args.0',
      'inline_code',
    ],
    [
      'a NODE_OPTIONS preload',
      () => ({
        type: 'stdio',
        command: process.execPath,
        args: [fixturePath('echo-server')],
        env: { NODE_OPTIONS: `--require ${preload}` },
      }),
      'config.env.NODE_OPTIONS',
      'loader_env',
    ],
    [
      'node --require',
      () => ({ type: 'stdio', command: process.execPath, args: ['--require', preload, fixturePath('echo-server')] }),
      'config.args.0',
      'inline_code',
    ],
  ])('refuses %s with 400 before anything runs', async (_name, config, field, reason) => {
    const res = await connect(svc, 'canary', config());
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason } });
    expect(existsSync(canary)).toBe(false);
    expect((await api(svc.url, 'GET', '/api/mcp/servers')).body.servers).toEqual([]);
  });

  it('refuses the names a REST path cannot address (. and ..) before anything runs', async () => {
    for (const name of ['.', '..']) {
      const res = await connect(svc, name, {
        type: 'stdio',
        command: process.execPath,
        args: [fixturePath('echo-server')],
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST' });
    }
    expect((await api(svc.url, 'GET', '/api/mcp/servers')).body.servers).toEqual([]);
  });

  it('still connects an ordinary server (node with a script)', async () => {
    const res = await connect(svc, 'echo', {
      type: 'stdio',
      command: process.execPath,
      args: [fixturePath('echo-server')],
    });
    expect(res.status).toBe(200);
    expect(res.body.server.status).toBe('connected');
  });
});

describe('runtime connect: allowedCommands and runtimeConnect', () => {
  let narrow: RunningApp;
  let off: RunningApp;
  beforeAll(async () => {
    narrow = await startApp({ server: { mcp: { allowedCommands: [process.execPath] } } });
    off = await startApp({ server: { mcp: { runtimeConnect: false } } });
  });
  afterAll(async () => {
    await narrow.stop();
    await off.stop();
  });

  it('runs only the listed executables', async () => {
    const python = await connect(narrow, 'py', { type: 'stdio', command: 'python3', args: ['-m', 'http.server'] });
    expect(python.status).toBe(400);
    expect(python.body.error.details).toEqual({ field: 'config.command', reason: 'command_not_allowed' });
    expect(
      (await connect(narrow, 'echo', { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] }))
        .status,
    ).toBe(200);
  });

  it('is off with runtimeConnect: false (403), while the config file servers stay', async () => {
    const res = await connect(off, 'echo', {
      type: 'stdio',
      command: process.execPath,
      args: [fixturePath('echo-server')],
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'runtime_connect_disabled' } });
    const a2a = await api(off.url, 'POST', '/api/connect-a2a-agent', {
      name: 'peer',
      config: { url: 'http://127.0.0.1:9/' },
    });
    expect([a2a.status, a2a.body.error?.details?.reason]).toEqual([403, 'runtime_connect_disabled']);
  });
});
