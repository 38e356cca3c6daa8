/**
 * The keys of `mcpServers.<name>` that change what agentd asks of a server and relays from it, each proven on
 * and off: `logLevel` (logging/setLevel, and the logs below it are not relayed), `progress` (no token, no
 * progress), `listChanged.resources` / `listChanged.prompts` (mcp.listChanged, the `mcpListChanged` frame).
 * Against the fixture notices-server.js (it reports the levels it was asked for and whether a call carried a
 * progress token) and server-everything, through the bus and, for the frames, the running app.
 * An absence is asserted only once something sent after it has arrived.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEvents } from '../../src/app.ts';
import { MCP_LOG_LEVELS } from '../../src/config/server-features.ts';
import { roomyLimits } from '../support/messaging.ts';
import { until } from '../support/wait.ts';
import { shorthandKeys, useShorthandApp } from '../support/keyed-app.ts';
import { EVERYTHING, fixture, harness, stdio, textOf, type Harness } from './mcp-helpers.ts';

/** A slow machine may need a retry of a server before all are connected. */
const CONNECT_WAIT = { timeout: 60_000 };

describe('mcpServers keys: logLevel, progress, listChanged (through the bus)', () => {
  let h: Harness;
  const logs: AppEvents['mcp.serverLog'][] = [];
  const progress: AppEvents['mcp.toolProgress'][] = [];
  const listChanges: AppEvents['mcp.listChanged'][] = [];

  beforeAll(async () => {
    h = harness({
      errors: fixture('notices-server', { logLevel: 'error' }),
      verbose: fixture('notices-server', { logLevel: 'debug' }),
      plain: fixture('notices-server'),
      noProgress: fixture('notices-server', { progress: false }),
      resourcesOnly: fixture('notices-server', { listChanged: { resources: true, prompts: false } }),
      promptsOnly: fixture('notices-server', { listChanged: { resources: false, prompts: true } }),
      everything: stdio([EVERYTHING]),
      everythingNoProgress: stdio([EVERYTHING], { progress: false }),
    });
    h.bus.on('mcp.serverLog', (e) => void logs.push(e.payload));
    h.bus.on('mcp.toolProgress', (e) => void progress.push(e.payload));
    h.bus.on('mcp.listChanged', (e) => void listChanges.push(e.payload));
    await h.service.start();
    await until(
      async () => (await h.bus.execute('mcp.listServers', {})).every((s) => s.status === 'connected'),
      'every server connected',
      CONNECT_WAIT,
    );
  });
  afterAll(async () => {
    await h?.stop();
  });

  const run = async (serverId: string, toolName: string, args: Record<string, unknown>, callId?: string) => {
    const result = await h.bus.execute('mcp.executeTool', {
      serverId,
      toolName,
      args,
      ...(callId !== undefined && { progress: { sessionId: 's', callId } }),
    });
    return textOf(result.data);
  };
  const levelsOf = (tag: string) =>
    logs.filter((l) => typeof l.data === 'string' && l.data.startsWith(`${tag} `)).map((l) => l.level);
  const progressOf = (callId: string) => progress.filter((p) => p.callId === callId);

  it('asks each server for its logLevel (logging/setLevel) and relays only the logs at or above it', async () => {
    const asked = await Promise.all(
      ['errors', 'verbose', 'plain'].map(
        async (id) => JSON.parse(await run(id, 'log-all', { tag: `lv-${id}` })) as unknown,
      ),
    );
    expect(asked).toEqual([{ setLevel: ['error'] }, { setLevel: ['debug'] }, { setLevel: [] }]); // no logLevel: never asked
    // `emergency` is the last message of each call: once it is in, every earlier one that was relayed is too.
    await until(
      () => ['errors', 'verbose', 'plain'].every((id) => levelsOf(`lv-${id}`).includes('emergency')),
      () => `the emergency logs; got ${JSON.stringify(logs)}`,
    );
    expect(logs.filter((l) => l.serverId === 'errors')).toEqual(
      ['error', 'critical', 'alert', 'emergency'].map((level) => ({
        serverId: 'errors',
        level,
        logger: 'notices',
        data: `lv-errors ${level}`,
      })),
    );
    expect(levelsOf('lv-verbose')).toEqual([...MCP_LOG_LEVELS]);
    expect(levelsOf('lv-plain')).toEqual([...MCP_LOG_LEVELS]); // the server's own choice: everything
    // agentd's own log got the same: nothing below `error` from `errors`.
    const pinoLevels = h.logs
      .filter((l) => l.msg === 'MCP server log' && l.serverId === 'errors')
      .map((l) => l.mcpLevel);
    expect(pinoLevels).toEqual(['error', 'critical', 'alert', 'emergency']);
  });

  it('progress: false sends no progress token and relays no progress; the default sends one and relays each notification', async () => {
    expect(JSON.parse(await run('noProgress', 'steps', {}, 'steps-off'))).toEqual({ progressToken: false });
    expect(JSON.parse(await run('plain', 'steps', {}, 'steps-on'))).toEqual({ progressToken: true });
    await until(() => progressOf('steps-on').length === 3, 'three progress events of the default server');
    expect(progressOf('steps-on')).toEqual(
      [1, 2, 3].map((n) => ({
        sessionId: 's',
        callId: 'steps-on',
        serverId: 'plain',
        toolName: 'steps',
        progress: n,
        total: 3,
      })),
    );
    expect(progressOf('steps-off')).toEqual([]);
  });

  it("progress: false: server-everything's long-running operation reports nothing (it reports only to a token); the default reports each step", async () => {
    const args = { duration: 0.3, steps: 3 };
    expect(await run('everythingNoProgress', 'trigger-long-running-operation', args, 'op-off')).toContain(
      'Long running operation completed',
    );
    expect(await run('everything', 'trigger-long-running-operation', args, 'op-on')).toContain(
      'Long running operation completed',
    );
    await until(() => progressOf('op-on').length === 3, 'three progress events of server-everything');
    expect(progressOf('op-on').map((p) => [p.serverId, p.progress, p.total])).toEqual([
      ['everything', 1, 3],
      ['everything', 2, 3],
      ['everything', 3, 3],
    ]);
    expect(progressOf('op-off')).toEqual([]);
    expect(progress.filter((p) => p.serverId === 'everythingNoProgress' || p.serverId === 'noProgress')).toEqual([]);
  });

  it('relays a resources or prompts list_changed as mcp.listChanged only for the lists the config leaves on (default: both)', async () => {
    const from = listChanges.length;
    // Per server, the list turned off is touched first: the one touched after it arrives, on the same pipe, later.
    const touch = async (serverId: string, lists: ('resources' | 'prompts')[]) => {
      for (const list of lists)
        expect(JSON.parse(await run(serverId, 'touch-list', { list }))).toEqual({ touched: list });
    };
    await Promise.all([
      touch('plain', ['resources', 'prompts']),
      touch('resourcesOnly', ['prompts', 'resources']),
      touch('promptsOnly', ['resources', 'prompts']),
    ]);
    const seen = (serverId: string) =>
      listChanges
        .slice(from)
        .filter((c) => c.serverId === serverId)
        .map((c) => c.list);
    await until(
      () =>
        seen('plain').length === 2 &&
        seen('resourcesOnly').includes('resources') &&
        seen('promptsOnly').includes('prompts'),
      () => `the list changes that are on; got ${JSON.stringify(listChanges.slice(from))}`,
    );
    expect(seen('plain')).toEqual(['resources', 'prompts']);
    expect(seen('resourcesOnly')).toEqual(['resources']);
    expect(seen('promptsOnly')).toEqual(['prompts']);
  });
});

describe('mcpServers keys in the running app: mcpServerLog and mcpListChanged frames', () => {
  const app = useShorthandApp(
    () => ({
      server: { auth: shorthandKeys, ...roomyLimits },
      mcpServers: { notices: fixture('notices-server', { logLevel: 'warning', listChanged: { resources: false } }) },
    }),
    { connectTimeout: CONNECT_WAIT.timeout },
  );
  const execute = async (toolName: string, body: unknown) =>
    expect((await app.asAdmin('POST', `/api/mcp/servers/notices/tools/${toolName}/execute`, body)).status).toBe(200);

  it('admins get mcpServerLog frames at or above the logLevel only', async () => {
    const from = app.admin.frames.length;
    await execute('log-all', { tag: 'app' });
    await app.admin.next((f) => f.event === 'mcpServerLog' && f.data.data === 'app emergency', undefined, from);
    const frames = app.admin.frames.slice(from).filter((f) => f.event === 'mcpServerLog');
    expect(frames.map((f) => f.data)).toEqual(
      ['warning', 'error', 'critical', 'alert', 'emergency'].map((level) => ({
        serverId: 'notices',
        level,
        logger: 'notices',
        data: `app ${level}`,
      })),
    );
  });

  it('every connection gets mcpListChanged for prompts (default on), never for resources (turned off)', async () => {
    const from = app.chat.frames.length;
    await execute('touch-list', { list: 'resources' });
    await execute('touch-list', { list: 'prompts' });
    await app.chat.next((f) => f.event === 'mcpListChanged' && f.data.list === 'prompts', undefined, from);
    expect(
      app.chat.frames
        .slice(from)
        .filter((f) => f.event === 'mcpListChanged')
        .map((f) => f.data),
    ).toEqual([{ serverId: 'notices', list: 'prompts' }]);
    await app.admin.next((f) => f.event === 'mcpListChanged' && f.data.list === 'prompts');
    expect(app.admin.frames.filter((f) => f.event === 'mcpListChanged').map((f) => f.data.list)).toEqual(['prompts']);
  });
});
