/**
 * /inspect/ws on the real server: off by default, same key as the API, late join, the turn
 * machine's states for a tool turn, sanitized frames, no watching without a viewer.
 */
import WebSocket, { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { fixturePath } from '../support/paths.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';
import { sessionKey } from '../../src/session-id.ts';

const KEY = 'inspect-test-key-0123456789';
const SECRET = 'sk-inspectsecret0123456789abcdef';
type Frame = {
  type: string;
  name?: string;
  sessionId: string;
  parentId?: string;
  rootId?: string;
  snapshot?: { value?: unknown; status?: string };
  event?: { type: string };
};

/** A viewer: its frames as they come, and a wait for one that matches. */
async function view(url: string) {
  const ws = new WebSocket(url);
  const frames: Frame[] = [];
  ws.on('message', (d: Buffer) => frames.push(JSON.parse(d.toString()) as Frame));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  /** The first frame that matches, once it arrived (frames may still be in flight). */
  const until = (match: (f: Frame) => boolean) =>
    vi.waitFor(() => {
      const found = frames.find(match);
      if (!found) throw new Error(`no matching inspection frame; got ${frames.length}`);
      return found;
    }, PATIENT);
  /** Resolves once every frame the server sent before this call has arrived (a WebSocket ping's pong follows them). */
  const drained = () => new Promise<void>((resolve) => (ws.once('pong', () => resolve()), ws.ping()));
  return { ws, frames, until, drained, close: () => ws.close() };
}

/** The watcher's default session: an owned session's actor is named by its key (src/session-id.ts). */
const TURN = `turn:${sessionKey('watcher', 'default')}`;

describe('inspector (/inspect/ws)', () => {
  let sim: Simulator;
  let svc: RunningApp;
  const url = () => `${svc.wsUrl}inspect/ws?token=${KEY}`;
  const ask = (message: string) =>
    fetch(`${svc.url}/api/message-sync`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message }),
    });

  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: { inspect: true, auth: { keys: [{ name: 'watcher', key: KEY, scopes: ['chat', 'inspect'] }] } },
        mcpServers: {
          echo: {
            type: 'stdio',
            command: process.execPath,
            args: [fixturePath('echo-server')],
            env: { TOKEN: SECRET },
          },
        },
      },
      { modelUrl: sim.url },
    );
    await ask('warm up');
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  it('watches nothing while no viewer is attached', async () => {
    await ask('no one is watching');
    expect(svc.app.inspect!.watching()).toBe(0);
    expect(svc.app.inspect!.actorIds().sort()).toEqual(['mcp:echo', TURN]);
  });

  it('serves the page at /inspect/ too (a trailing slash, as a person types it)', async () => {
    const res = await fetch(`${svc.url}/inspect/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toBe(await (await fetch(`${svc.url}/inspect`)).text());
  });

  it('needs the API key, like the API', async () => {
    await expect(view(`${svc.wsUrl}inspect/ws`)).rejects.toThrow(/401/);
  });

  it('gives a late viewer the live actors, then a tool turn through its states, sanitized', async () => {
    const v = await view(url());
    await vi.waitFor(() => expect(svc.app.inspect!.watching()).toBe(2), PATIENT);
    await v.until((f) => f.name === TURN);
    await v.until((f) => f.name === 'mcp:echo'); // the late-join frames follow the upgrade
    const joined = v.frames.filter((f) => f.type === '@xstate.actor').map((f) => f.name);
    expect(joined).toEqual(expect.arrayContaining([TURN, 'mcp:echo']));
    expect(v.frames[1]?.type).toBe('@xstate.snapshot');

    const res = await ask('Please echo the hidden-marker-42 [[tool:echo {"message":"hidden-marker-42"}]]');
    expect(res.status).toBe(200);
    const session = v.frames.find((f) => f.name === TURN)!.sessionId;
    const turnActor = await v.until((f) => f.type === '@xstate.actor' && f.parentId === session);
    expect(turnActor).toBeDefined();
    await v.until(
      (f) => f.type === '@xstate.snapshot' && f.sessionId === turnActor.sessionId && f.snapshot?.status === 'done',
    );
    const states = v.frames
      .filter((f) => f.type === '@xstate.snapshot' && f.sessionId === turnActor.sessionId)
      .map((f) => f.snapshot?.value);
    expect(states.filter((s, i) => s !== states[i - 1])).toEqual([
      'thinking',
      'callingTools',
      'thinking',
      'responding',
    ]);

    const text = JSON.stringify(v.frames);
    expect(text).not.toContain('hidden-marker-42');
    expect(text).not.toContain(SECRET);
    expect(v.frames.some((f) => f.event?.type === 'chunk' || f.event?.type === 'model.text')).toBe(false);
    v.close();
    await vi.waitFor(() => expect(svc.app.inspect!.watching()).toBe(0), PATIENT); // once the close reaches the server
  });

  it('narrows the stream with ?actor=', async () => {
    const v = await view(`${url()}&actor=mcp:echo`);
    const all = await view(url());
    const session = (await all.until((f) => f.name === TURN)).sessionId;
    await ask('another turn');
    // Once the unnarrowed viewer has the turn's last frame, the server has sent the turn's frames to
    // every viewer; the narrowed one has all it was sent once its ping is answered.
    const turn = await all.until((f) => f.type === '@xstate.actor' && f.parentId === session);
    await all.until(
      (f) => f.type === '@xstate.snapshot' && f.sessionId === turn.sessionId && f.snapshot?.status === 'done',
    );
    await v.drained();
    expect(new Set(v.frames.map((f) => f.name).filter(Boolean))).toEqual(new Set(['mcp:echo']));
    expect(v.frames.some((f) => f.sessionId === turn.sessionId)).toBe(false);
    v.close();
    all.close();
  });

  it('is not served unless turned on', async () => {
    const off = await startApp();
    try {
      await expect(view(`${off.wsUrl}inspect/ws`)).rejects.toThrow(/upgrade refused|Unexpected server response/);
    } finally {
      await off.stop();
    }
  });
});

describe('inspector backpressure', () => {
  it('a viewer that stops reading gets a resync and a fresh late-join state once it drains, not an endless queue', async () => {
    const sim = await startSimulator();
    const svc = await startApp({ server: { inspect: true, inspectContent: true } }, { modelUrl: sim.url });
    try {
      const v = await view(`${svc.wsUrl}inspect/ws`);
      const socket = (v.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause(); // the viewer stops reading; with content on, every turn's frames carry its 200 KB message
      const big = 'x'.repeat(200_000);
      for (let i = 0; i < 12; i++) {
        const res = await fetch(`${svc.url}/api/message-sync`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ message: big }),
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer(); // an unread 200 KB reply would hold its connection (one IP has 10)
      }
      socket.resume();
      const resync = await v.until((f) => f.type === 'resync');
      expect(resync).toBeDefined();
      const after = v.frames.slice(v.frames.indexOf(resync) + 1);
      expect(after[0]?.type).toBe('@xstate.actor');
      expect(after[0]?.name).toBe('turn:default');
      v.close();
    } finally {
      await svc.stop();
      await sim.close();
    }
  });
});

describe('inspector relay (--inspect-relay)', () => {
  it('pushes the stream to an external inspector server', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as { port: number }).port;
    const received: Frame[] = [];
    server.on('connection', (socket) =>
      socket.on('message', (d: Buffer) => received.push(JSON.parse(d.toString()) as Frame)),
    );
    const svc = await startApp({ server: { inspect: true, inspectRelay: `ws://127.0.0.1:${port}` } });
    try {
      await fetch(`${svc.url}/api/reset`, { method: 'POST' }); // opens the default session
      await vi.waitFor(
        () => expect(received.find((f) => f.name === 'turn:default')?.type).toBe('@xstate.actor'),
        PATIENT,
      );
      expect(svc.app.inspect!.viewers()).toBe(1);
    } finally {
      await svc.stop();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
