/**
 * The agent service wired to real parts through the bus (no HTTP): the openai-SDK LlmClient against
 * the model simulator, the MCP service with server-everything over stdio, memory and JSONL stores.
 */
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/session-id.ts';
import { createAgentService, type AgentService } from '../../src/agent/index.ts';
import type { AppBus, AppCommands, AppEvents } from '../../src/app.ts';
import { createBus, type Envelope } from '../../src/bus/index.ts';
import { agentConfigSchema, mcpServerConfigSchema } from '../../src/config/schema.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import type { LlmClient } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMcpService, type McpService } from '../../src/tools/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { recordBus, type FrameEvents } from '../support/bus-recorder.ts';
import { EVERYTHING } from '../support/paths.ts';
import { createJsonlStore, createMemoryStore } from '../../src/store/index.ts';
import type { EventStore } from '../../src/store/types.ts';

const API_KEY = 'sk-agent-int-secret-0123456789';
const log = createLogger('silent');

let sim: Simulator;
let bus: AppBus;
let mcp: McpService;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY });
  bus = createBus<AppCommands, AppEvents>({ log });
  const everything = mcpServerConfigSchema.parse({
    type: 'stdio',
    command: process.execPath,
    args: [EVERYTHING, 'stdio'],
    timeout: 10_000,
  });
  mcp = createMcpService({ config: { mcpServers: { everything }, toolResultMaxBytes: 100 * 1024 }, bus, log });
  await mcp.start();
});
afterAll(async () => {
  await mcp.stop();
  await sim.close();
});

interface Rig {
  agent: AgentService;
  store: EventStore<SessionEvent>;
  events: Envelope[];
  /** Sends a message and resolves with the event that ends its turn (response or error). */
  turn(content: string, sessionId?: string): Promise<Envelope>;
  send(content: string, sessionId?: string): Promise<{ correlationId: string; queued: boolean }>;
  end(correlationId: string): Promise<Envelope>;
  of(correlationId: string): Envelope[];
}

const open: { agent: AgentService; off: () => void }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.off();
    await o.agent.stop();
  }
});

function llmClient(apiKey = API_KEY): LlmClient {
  const config = agentConfigSchema.parse({
    llm: {
      provider: 'openai-compatible',
      model: 'sim-model',
      baseURL: sim.url,
      apiKey,
      maxRetries: 0,
      timeoutMs: 10_000,
    },
  });
  return createLlmClient(config.llm, { log, env: {} });
}

let commands = 0;
async function rig(
  opts: { store?: EventStore<SessionEvent>; maxIterations?: number; llm?: LlmClient } = {},
): Promise<Rig> {
  const store = opts.store ?? createMemoryStore<SessionEvent>();
  const config = agentConfigSchema.parse({
    systemPrompt: 'You are the integration test agent.',
    llm: {
      provider: 'openai-compatible',
      model: 'sim-model',
      baseURL: sim.url,
      maxIterations: opts.maxIterations ?? 20,
    },
    storage: { type: 'memory' },
  });
  const agent = createAgentService({ config, bus, store, llm: opts.llm ?? llmClient(), log });
  await agent.start();
  const recorder = recordBus(bus);
  open.push({ agent, off: recorder.stop });
  const events = recorder.events;
  const end = (correlationId: string) => recorder.turnEnd(correlationId);
  const send = async (content: string, sessionId = 'default') => {
    const correlationId = `int-${++commands}`;
    const { queued } = await bus.execute(
      'agent.sendMessage',
      { sessionId: sessionKey(undefined, sessionId), content },
      { correlationId },
    );
    return { correlationId, queued };
  };
  return {
    agent,
    store,
    events,
    send,
    end,
    turn: async (content, sessionId) => end((await send(content, sessionId)).correlationId),
    of: (correlationId) => events.filter((e) => e.correlationId === correlationId),
  };
}

const payload = <N extends keyof FrameEvents>(e: Envelope | undefined) => e?.payload as FrameEvents[N];
const lastRequest = () => sim.requests.at(-1)?.body;

describe('agent service with the simulator and server-everything', () => {
  it('streams a reply whose chunks join to the response, with the system prompt first', async () => {
    const r = await rig();
    const end = await r.turn('hello streaming world [[rate:20]]');
    expect(end.name).toBe('agent.response');
    const turn = r.of(end.correlationId);
    const chunks = turn.filter((e) => e.name === 'agent.chunk').map((e) => payload<'agent.chunk'>(e).content);
    expect(chunks.length).toBeGreaterThan(1); // pieces 50 ms apart; those read together are one chunk
    expect(payload<'agent.response'>(end)).toMatchObject({
      content: 'You said: hello streaming world',
      model: 'sim-model',
      sessionId: 'default',
    });
    expect(chunks.join('')).toBe(payload<'agent.response'>(end).content);
    expect(turn.map((e) => e.name).filter((n) => n !== 'agent.chunk')).toEqual([
      'agent.userMessage',
      'agent.thinking',
      'agent.response',
    ]);
    expect(lastRequest()?.messages[0]).toEqual({ role: 'system', content: 'You are the integration test agent.' });
  });

  it('calls a real MCP tool and hands its result to the model; parallel calls both answer', async () => {
    const r = await rig();
    const end = await r.turn('[[tool:echo {"message":"ping"}]] [[tool:get-sum {"a":2,"b":3}]]');
    const names = r.of(end.correlationId).map((e) => e.name);
    expect(names.filter((n) => n === 'agent.toolCall')).toHaveLength(2);
    expect(names.lastIndexOf('agent.toolCall')).toBeLessThan(names.indexOf('agent.toolResult'));
    const calls = r.events.filter((e) => e.name === 'agent.toolCall').map((e) => payload<'agent.toolCall'>(e));
    expect(calls.map((c) => [c.toolName, c.serverId, c.args])).toEqual([
      ['echo', 'everything', { message: 'ping' }],
      ['get-sum', 'everything', { a: 2, b: 3 }],
    ]);
    const results = r.events.filter((e) => e.name === 'agent.toolResult').map((e) => payload<'agent.toolResult'>(e));
    expect(results.every((x) => x.success)).toBe(true);
    const reply = payload<'agent.response'>(end).content;
    expect(reply).toContain('Echo: ping');
    expect(reply).toContain('5');
    expect(lastRequest()?.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
  });

  it('queues a second message (FIFO) behind a running turn', async () => {
    const r = await rig();
    const first = await r.send('first [[ttft:300]]', 'queue');
    const second = await r.send('second', 'queue');
    expect([first.queued, second.queued]).toEqual([false, true]);
    const [a, b] = await Promise.all([r.end(first.correlationId), r.end(second.correlationId)]);
    expect(payload<'agent.response'>(a).content).toBe('You said: first');
    expect(payload<'agent.response'>(b).content).toBe('You said: second');
    expect(r.events.indexOf(a)).toBeLessThan(r.events.findIndex((e) => e.correlationId === second.correlationId));
  });

  it('cancels mid-stream and mid-tool; the session stays usable', async () => {
    const r = await rig();
    const slow = await r.send('[[len:200]] [[rate:20]]', 'cancel');
    await new Promise<void>((resolve) => {
      const off = bus.on('agent.chunk', (e) => {
        if (e.correlationId === slow.correlationId) {
          off();
          resolve();
        }
      });
    });
    expect(await bus.execute('agent.cancel', { sessionId: sessionKey(undefined, 'cancel') })).toEqual({
      cancelled: true,
    });
    expect(payload<'agent.error'>(await r.end(slow.correlationId))).toMatchObject({
      code: 'AGENT_ERROR',
      message: 'turn cancelled',
      details: { reason: 'cancelled' },
    });

    const tool = await r.send('[[tool:trigger-long-running-operation {"duration":10,"steps":10}]]', 'cancel');
    await new Promise<void>((resolve) => {
      const off = bus.on('agent.stored', (e) => {
        if (e.correlationId === tool.correlationId && e.payload.event.type === 'toolCall') {
          off();
          resolve();
        }
      });
    });
    const t0 = Date.now();
    expect(await bus.execute('agent.cancel', { sessionId: sessionKey(undefined, 'cancel') })).toEqual({
      cancelled: true,
    });
    expect((await r.end(tool.correlationId)).name).toBe('agent.error');
    expect(Date.now() - t0).toBeLessThan(4_000); // ended by the cancel: the tool runs for 10 s
    expect((await r.turn('still there?', 'cancel')).name).toBe('agent.response');
    const { frames } = await bus.execute('agent.history', { sessionId: sessionKey(undefined, 'cancel') });
    expect(frames.filter((f) => f.event === 'error').map((f) => f.data)).toMatchObject([
      { details: { reason: 'cancelled' } },
      { details: { reason: 'cancelled' } },
    ]);
  });

  it('reset empties the history the model sees', async () => {
    const r = await rig();
    await r.turn('my secret is 42', 'reset');
    const { seq } = await bus.execute(
      'agent.reset',
      { sessionId: sessionKey(undefined, 'reset') },
      { correlationId: 'int-reset' },
    );
    expect(r.events.find((e) => e.name === 'agent.conversationReset')).toMatchObject({
      correlationId: 'int-reset',
      payload: { sessionId: 'reset', seq },
    });
    await r.turn('what was it?', 'reset');
    expect(lastRequest()?.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('keeps the history across a new service over the same JSONL directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-agent-int-'));
    try {
      const store1 = createJsonlStore({ dir, log, parseEvent: parseSessionEvent });
      const r1 = await rig({ store: store1 });
      await r1.turn('remember the colour blue', 'persist');
      await r1.turn('[[tool:echo {"message":"saved"}]]', 'persist');
      const o = open.pop();
      o?.off();
      await o?.agent.stop();
      await store1.close();

      const r2 = await rig({ store: createJsonlStore({ dir, log, parseEvent: parseSessionEvent }) });
      const end = await r2.turn('what colour?', 'persist');
      const sent = lastRequest()?.messages.map((m) => m.role);
      expect(sent).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'user']);
      const stored = await r2.store.read('persist');
      expect(stored.map((s) => s.seq)).toEqual(stored.map((_, i) => i + 1));
      expect(payload<'agent.response'>(end).seq).toBe(stored.at(-1)?.seq);
      await r2.store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('model faults end the turn cleanly and leave the session usable', async () => {
    const r = await rig({ maxIterations: 3 });
    const denied = payload<'agent.error'>(await r.turn('[[error:401]]', 'faults'));
    expect(denied.code).toBe('AGENT_ERROR');
    expect(denied.message).toMatch(/401/);

    const bad = await r.turn('[[badjson:echo]]', 'faults');
    expect(bad.name).toBe('agent.response');
    const badResult = r.events.find((e) => e.name === 'agent.toolResult' && e.correlationId === bad.correlationId);
    expect(payload<'agent.toolResult'>(badResult)).toMatchObject({ success: false });
    expect(payload<'agent.response'>(bad).content).toMatch(/Invalid arguments for tool "echo"/);

    const before = sim.requests.length;
    const capped = await r.turn('[[loop:echo {"message":"again"}]]', 'faults');
    expect(sim.requests.length - before).toBe(3);
    expect(payload<'agent.response'>(capped).content).toMatch(/iteration limit \(3 model steps\)/);
    const chunks = r
      .of(capped.correlationId)
      .filter((e) => e.name === 'agent.chunk')
      .map((e) => payload<'agent.chunk'>(e).content);
    expect(chunks.join('')).toBe(payload<'agent.response'>(capped).content);

    expect(payload<'agent.response'>(await r.turn('are you ok?', 'faults')).content).toBe('You said: are you ok?');
  });

  it('hands an image to the model as an image part', async () => {
    const r = await rig();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]).toString('base64');
    const correlationId = `int-img-${++commands}`;
    await bus.execute(
      'agent.sendMessage',
      {
        sessionId: sessionKey(undefined, 'img'),
        content: 'look [[image]]',
        image: { mimeType: 'image/png', base64: png },
      },
      { correlationId },
    );
    const end = await r.end(correlationId);
    expect(payload<'agent.response'>(end).content).toBe('The last user message had an image (image/png, 8 bytes).');
    expect(payload<'agent.userMessage'>(r.of(correlationId)[0])).toMatchObject({
      hasImage: true,
      content: 'look [[image]]',
    });
  });

  it('a rejected API key is an AGENT_ERROR that never shows the key', async () => {
    const wrong = 'sk-wrong-key-should-never-leak-42';
    const r = await rig({ llm: llmClient(wrong) });
    const err = payload<'agent.error'>(await r.turn('hi', 'auth'));
    expect(err.code).toBe('AGENT_ERROR');
    expect(err.message).toMatch(/401|auth/i);
    expect(JSON.stringify(err)).not.toContain(wrong);
  });
});
