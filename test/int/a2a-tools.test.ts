/**
 * Issue 26 item 4: remote A2A agents as tools, end to end. The remote agents are the A2A SDK's own server side
 * (its framework-free JSON-RPC handler behind node:http on 127.0.0.1), never agentd's; the model is the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPeer, type Peer } from '../support/a2a-peer.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, roomyLimits, turnFrames } from '../support/messaging.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const ADMIN_KEY = 'admin-key-0123456789abcdef';

describe('A2A agents as tools', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let ws: WsClient;
  let echo: Peer;
  let blocking: Peer;
  let asker: Peer;
  let slow: Peer;
  let legacy: Peer;
  let patient: Peer;
  const asAdmin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${svc.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${ADMIN_KEY}`,
        ...(body !== undefined && { 'Content-Type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const toolResult = async (content: string, sessionId: string) => {
    const from = ws.frames.length;
    ws.send({ type: 'message', content, sessionId });
    const frames = await turnFrames(ws, sessionId, from);
    return frames.find((f) => f.event === 'toolResult')?.data;
  };

  beforeAll(async () => {
    [sim, echo, blocking, asker, slow, legacy, patient] = await Promise.all([
      startSimulator(),
      startPeer('echo'),
      startPeer('echo', false),
      startPeer('ask'),
      startPeer('slow'),
      startPeer('echo', true, true),
      startPeer('slow', false),
    ]);
    svc = await startApp(
      {
        server: { auth: { adminKey: ADMIN_KEY }, ...roomyLimits },
        a2aAgents: {
          peer: { url: echo.url, headers: { 'x-peer-key': 'peer-secret-123456' } },
          blocking: { url: blocking.url },
          asker: { url: asker.url },
          slow: { url: slow.url, timeout: 20_000 },
          legacy: { url: legacy.url },
          sluggish: { url: slow.url, timeout: 1_000 },
          patient: { url: patient.url },
          // Nothing A2A there: the card fetch fails (404).
          broken: { url: `${echo.url}/nowhere` },
        },
      },
      { modelUrl: sim.url },
    );
    await until(async () => {
      const servers = (await asAdmin('GET', '/api/mcp/servers')).body.servers as { name: string; status: string }[];
      return servers.filter((s) => s.status === 'connected').length === 7;
    }, 'seven A2A agents connected');
    ws = await connectWs(`${svc.wsUrl}?token=${ADMIN_KEY}`);
  });
  afterAll(async () => {
    ws?.close();
    await svc?.stop();
    await Promise.all([sim, echo, blocking, asker, slow, legacy, patient].map((x) => x?.close()));
  });

  it('lists each agent as a server and its skill as a tool named <entry>--<skill>', async () => {
    const servers = (await asAdmin('GET', '/api/mcp/servers')).body.servers as Record<string, unknown>[];
    expect(servers.find((s) => s.name === 'peer')).toMatchObject({
      id: 'peer',
      status: 'connected',
      type: 'http',
      description: 'A2A agent',
    });
    const tools = (await asAdmin('GET', '/api/mcp/servers/peer/tools')).body.tools as Record<string, any>[];
    expect(tools.map((t) => [t.name, t.inputSchema.required])).toEqual([['chat', ['message']]]);
    const res = await fetch(`${svc.url}/api/mcp/servers/peer/tools`, {
      headers: { Authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.status).toBe(200);
    const modelTools = async () => (await svc.app.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    expect((await modelTools()).sort()).toEqual([
      'asker--chat',
      'blocking--chat',
      'legacy--chat',
      'patient--chat',
      'peer--chat',
      'slow--chat',
      'sluggish--chat',
    ]);
  });

  it("the model's call streams the remote's reply back, with the headers and the hop count", async () => {
    const result = await toolResult('[[tool:peer--chat {"message":"hi"}]]', 'a2a-echo');
    expect(result).toMatchObject({ toolName: 'chat', serverId: 'peer', success: true });
    expect(JSON.stringify(result?.result)).toContain('echo: hi');
    expect(echo.received.at(-1)?.metadata).toEqual({ 'agentd/hops': 1 });
    // Every request of the `peer` entry so far (card and calls; `broken` asks under /nowhere) carried its headers.
    const ofPeer = echo.keys.filter((_k, i) => !echo.requests[i]!.includes('/nowhere'));
    expect(ofPeer.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ofPeer)).toEqual(new Set(['peer-secret-123456']));
  });

  it('a 0.3 agent (0.3 card, message/stream) is called the same way', async () => {
    const result = await toolResult('[[tool:legacy--chat {"message":"old"}]]', 'a2a-legacy');
    expect(result).toMatchObject({ success: true });
    expect(JSON.stringify(result?.result)).toContain('echo: old');
    expect(legacy.received.at(-1)?.metadata).toEqual({ 'agentd/hops': 1 });
  });

  it('a remote without streaming is called with SendMessage, then its task is read', async () => {
    const result = await toolResult('[[tool:blocking--chat {"message":"plain"}]]', 'a2a-blocking');
    expect(result).toMatchObject({ success: true });
    expect(JSON.stringify(result?.result)).toContain('echo: plain');
  });

  it("input-required fails the call with the remote's question", async () => {
    const result = await toolResult('[[tool:asker--chat {"message":"weather?"}]]', 'a2a-ask');
    expect(result).toMatchObject({ success: false });
    expect(JSON.stringify(result?.result)).toContain('Which city do you mean?');
  });

  it.each(['slow', 'patient'] as const)(
    'cancelling the turn cancels the remote task (%s: streaming, then polled)',
    async (entry) => {
      const remote = entry === 'slow' ? slow : patient;
      const from = ws.frames.length;
      const before = new Set(remote.started);
      ws.send({
        type: 'message',
        content: `[[tool:${entry}--chat {"message":"take your time"}]]`,
        sessionId: `a2a-${entry}`,
      });
      await until(() => remote.started.size > before.size, 'the remote task started');
      ws.send({ type: 'cancel', sessionId: `a2a-${entry}` });
      await turnFrames(ws, `a2a-${entry}`, from);
      const taskId = [...remote.started].find((id) => !before.has(id))!;
      await until(() => remote.cancelled.has(taskId), 'the remote task was cancelled');
    },
  );

  it("a call past the entry's timeout fails, and cancels the remote task", async () => {
    const before = new Set(slow.started);
    const result = await toolResult('[[tool:sluggish--chat {"message":"too slow"}]]', 'a2a-timeout');
    expect(result).toMatchObject({ success: false });
    expect(JSON.stringify(result?.result)).toContain('did not answer within 1000 ms');
    const taskId = [...slow.started].find((id) => !before.has(id))!;
    await until(() => slow.cancelled.has(taskId), 'the remote task was cancelled');
  });

  it('a direct execution goes through the same call', async () => {
    const res = await asAdmin('POST', '/api/mcp/servers/peer/tools/chat/execute', { message: 'direct' });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body.data)).toContain('echo: direct');
    expect(echo.received.at(-1)?.metadata).toBeUndefined();
  });

  it('a card that cannot be fetched shows as an error status (and keeps being retried)', async () => {
    const broken = (await asAdmin('GET', '/api/mcp/servers')).body.servers.find(
      (s: { name: string }) => s.name === 'broken',
    );
    expect(broken).toMatchObject({ status: 'error', type: 'http' });
    expect(broken.error).toMatch(/agent card/);
    const before = echo.requests.filter((r) => r.startsWith('GET /nowhere')).length;
    await until(
      () => echo.requests.filter((r) => r.startsWith('GET /nowhere')).length > before,
      'a retry of the card fetch',
    );
  });

  it('adds, restarts and removes an agent at runtime (admin only, names shared with MCP servers)', async () => {
    const added = await asAdmin('POST', '/api/connect-a2a-agent', { name: 'late', config: { url: echo.url } });
    expect(added).toMatchObject({
      status: 200,
      body: { status: 'connected', name: 'late', server: { id: 'late', status: 'connected', type: 'http' } },
    });
    const result = await toolResult('[[tool:late--chat {"message":"later"}]]', 'a2a-late');
    expect(JSON.stringify(result?.result)).toContain('echo: later');
    expect(
      (await asAdmin('POST', '/api/connect-a2a-agent', { name: 'peer', config: { url: echo.url } })).body.error.code,
    ).toBe('INVALID_REQUEST');
    expect((await asAdmin('POST', '/api/connect-a2a-agent', { name: 'x', config: {} })).body.error).toMatchObject({
      code: 'MISSING_FIELD',
      details: { field: 'config.url' },
    });
    expect(
      (await api(svc.url, 'POST', '/api/connect-a2a-agent', { name: 'y', config: { url: echo.url } })).status,
    ).toBe(401);
    expect((await asAdmin('DELETE', '/api/mcp/servers/late')).status).toBe(200);
    expect(
      (await asAdmin('GET', '/api/mcp/servers')).body.servers.some((s: { name: string }) => s.name === 'late'),
    ).toBe(false);
  });

  it('runtime agents pass the URL policy before any request is sent', async () => {
    const closed = await startApp(
      { server: { auth: { adminKey: ADMIN_KEY }, mcp: { allowPrivateNetworks: false }, ...roomyLimits } },
      { modelUrl: sim.url },
    );
    try {
      const before = echo.requests.length;
      for (const [url, reason] of [
        [echo.url, 'private_network'],
        ['http://169.254.169.254/', 'metadata'],
        ['http://[::ffff:169.254.169.254]/', 'metadata'],
      ] as const) {
        const res = await fetch(`${closed.url}/api/connect-a2a-agent`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'far', config: { url } }),
        });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: unknown }).error).toMatchObject({
          code: 'INVALID_REQUEST',
          details: { field: 'config.url', reason },
        });
      }
      expect(echo.requests.length).toBe(before);
    } finally {
      await closed.stop();
    }
  });
});
