/**
 * Deleting a session is atomic against everything in flight (issue 23, item 7), at the service:
 * deterministic interleavings of delete with an approval, a running tool call and unflushed facts,
 * and of approvals with cancel and reset. Once the delete resolved: no tool call of the session
 * runs, no approval succeeds (APPROVAL_NOT_FOUND), and nothing reaches the store for it again.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sessionKey } from '../../src/session-id.ts';
import { createAgentService, type AgentService } from '../../src/agent/index.ts';
import type { AppCommands, AppEvents } from '../../src/app.ts';
import { createBus } from '../../src/bus/index.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import type { LlmClient, ModelStep } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { createJsonlStore, createMemoryStore } from '../../src/store/index.ts';
import { fileNameOf } from '../../src/store/session-file-name.ts';
import type { EventStore } from '../../src/store/types.ts';
import type { ModelTool, ModelToolOutcome } from '../../src/tools/messages.ts';
import { PATIENT } from '../support/wait.ts';

const S = sessionKey(undefined, 'doomed');
const tools: ModelTool[] = [
  { name: 'echo', description: 'Echo', parameters: { type: 'object' }, serverId: 'everything', toolName: 'echo' },
];
const askStep: ModelStep = {
  text: '',
  toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"message":"x"}' }],
  finishReason: 'tool_calls',
};
const done: ModelStep = { text: 'done', toolCalls: [], finishReason: 'stop' };
const ok = (name: string): ModelToolOutcome => ({
  success: true,
  text: 'x',
  result: { content: [{ type: 'text', text: 'x' }] },
  serverId: 'everything',
  toolName: name,
  durationMs: 1,
});

/** A store whose appends can be held, recording every call per session in order. */
function watchedStore(inner: EventStore<SessionEvent>) {
  const calls: string[] = [];
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const store: EventStore<SessionEvent> = {
    ...inner,
    async append(sessionId, events) {
      calls.push(`append:${sessionId}:${events.map((e) => e.type).join(',')}`);
      if (gate) await gate;
      return inner.append(sessionId, events);
    },
    delete(sessionId) {
      calls.push(`delete:${sessionId}`);
      return inner.delete(sessionId);
    },
  };
  return {
    store,
    calls,
    hold: () => void (gate = new Promise<void>((resolve) => (open = resolve))),
    release: () => {
      gate = undefined;
      open?.();
    },
  };
}

interface Rig {
  agent: AgentService;
  exec: <N extends keyof AppCommands>(name: N, payload: AppCommands[N]['payload']) => Promise<AppCommands[N]['result']>;
  /** Every tool call started, with its abort signal. */
  started: { args: unknown; signal: AbortSignal | undefined }[];
  /** Resolves the tool calls started so far. */
  finishTools: () => void;
}

const rigs: AgentService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const a of rigs.splice(0)) await a.stop();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function rig(store: EventStore<SessionEvent>): Promise<Rig> {
  const log = createLogger('silent');
  const bus = createBus<AppCommands, AppEvents>({ log });
  const config = agentConfigSchema.parse({
    systemPrompt: 'Be brief.',
    llm: { model: 'fake-model' },
    storage: { type: 'memory' },
    toolPolicy: { rules: [{ server: 'everything', tool: 'echo', action: 'ask' }] },
  });
  let n = 0;
  const llm: LlmClient = { model: 'fake-model', complete: () => Promise.resolve(++n % 2 === 1 ? askStep : done) };
  const started: Rig['started'] = [];
  const waiting: (() => void)[] = [];
  bus.handle('mcp.modelTools', () => tools);
  bus.handle('mcp.callModelTool', ({ payload }) => {
    started.push({ args: payload.args, signal: payload.signal });
    return new Promise((resolve) => waiting.push(() => resolve(ok(payload.name))));
  });
  const agent = createAgentService({ config, bus, store, llm, log, evictAfterMs: 0 });
  await agent.start();
  rigs.push(agent);
  return {
    agent,
    exec: (name, payload) => bus.execute(name, payload),
    started,
    finishTools: () => waiting.splice(0).forEach((f) => f()),
  };
}

/** A session whose turn waits for the approval of call c1. */
async function waitingForApproval(r: Rig): Promise<void> {
  await r.exec('agent.sendMessage', { sessionId: S, content: 'go' });
  await vi.waitFor(async () => expect(await r.exec('agent.questions', { sessionId: S })).toHaveLength(1), PATIENT);
}

const approve = (r: Rig) =>
  r.exec('agent.answer', { sessionId: S, id: 'c1', answer: { decision: 'approve' }, by: 'rest' });
const types = async (store: EventStore<SessionEvent>) => (await store.read(S)).map((e) => e.event.type);

/** Every invariant of a delete that answered: nothing stored, nothing pending, nothing started after it. */
async function assertGone(r: Rig, store: EventStore<SessionEvent>, calls: string[], startedBefore: number) {
  expect(await r.exec('agent.questions', { sessionId: S })).toEqual([]);
  await expect(approve(r)).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
  expect(r.agent.holds(S)).toBe(false);
  r.finishTools(); // late results of aborted calls go nowhere
  await r.agent.stop(); // every outbox drained: a late write would have landed by now
  expect(r.started.length).toBe(startedBefore);
  for (const s of r.started) expect(s.signal?.aborted).toBe(true);
  const lastDelete = calls.lastIndexOf(`delete:${S}`);
  expect(lastDelete).toBeGreaterThanOrEqual(0);
  expect(calls.slice(lastDelete + 1).filter((c) => c.startsWith(`append:${S}:`))).toEqual([]);
  expect(await store.list()).toEqual([]);
  expect(await types(store)).toEqual([]);
}

describe('delete against everything in flight', () => {
  it('approve then delete in the same tick: the approval loses or its call is aborted; nothing is written after the delete', async () => {
    const w = watchedStore(createMemoryStore());
    const r = await rig(w.store);
    await waitingForApproval(r);
    const a = approve(r);
    const d = r.exec('agent.deleteSession', { sessionId: S });
    const [approved, deleted] = await Promise.allSettled([a, d]);
    expect(deleted).toEqual({ status: 'fulfilled', value: { deleted: true } });
    if (approved.status === 'rejected') expect(approved.reason).toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    await assertGone(r, w.store, w.calls, r.started.length);
    // the call never ran to completion: no toolResult of it was ever handed to the store
    expect(w.calls.filter((c) => c.includes('toolResult'))).toEqual([]);
  });

  it('delete then approve: the approval answers APPROVAL_NOT_FOUND and the tool never starts', async () => {
    const w = watchedStore(createMemoryStore());
    const r = await rig(w.store);
    await waitingForApproval(r);
    const d = r.exec('agent.deleteSession', { sessionId: S });
    const a = approve(r);
    await expect(a).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    expect(await d).toEqual({ deleted: true });
    expect(r.started).toEqual([]);
    await assertGone(r, w.store, w.calls, 0);
    expect(w.calls.filter((c) => c.includes('questionClosed'))).toEqual([]);
  });

  it('approve answered, then delete while the tool call runs: the call is aborted and its result never stored', async () => {
    const w = watchedStore(createMemoryStore());
    const r = await rig(w.store);
    await waitingForApproval(r);
    await approve(r);
    await vi.waitFor(() => expect(r.started).toHaveLength(1), PATIENT);
    expect(r.started[0]?.signal?.aborted).toBe(false);
    expect(await r.exec('agent.deleteSession', { sessionId: S })).toEqual({ deleted: true });
    expect(r.started[0]?.signal?.aborted).toBe(true);
    await assertGone(r, w.store, w.calls, 1);
    expect(w.calls.filter((c) => c.includes('toolResult'))).toEqual([]);
  });

  it('delete while the outbox has unflushed facts (jsonl): the batch in flight lands before the delete, the rest never; no file afterwards', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-delete-'));
    dirs.push(dir);
    const w = watchedStore(
      createJsonlStore({ dir, log: createLogger('silent'), parseEvent: parseSessionEvent, fsync: false }),
    );
    await w.store.open();
    const r = await rig(w.store);
    await waitingForApproval(r);
    w.hold(); // the next append stays in flight
    const a = approve(r);
    await a; // questionClosed is handed to the store and held there; the tool call starts
    await vi.waitFor(() => expect(r.started).toHaveLength(1), PATIENT);
    r.finishTools(); // its toolResult queues behind the held append
    await vi.waitFor(() => expect(w.calls.at(-1)).toContain('questionClosed'), PATIENT);
    const d = r.exec('agent.deleteSession', { sessionId: S });
    w.release();
    expect(await d).toEqual({ deleted: true });
    await assertGone(r, w.store, w.calls, 1);
    await expect(stat(join(dir, fileNameOf(S)))).rejects.toMatchObject({ code: 'ENOENT' });
    await w.store.close();
  });

  it('a delete while the session is still opening closes it once open; commands that came meanwhile find a new session', async () => {
    const w = watchedStore(createMemoryStore());
    await w.store.append(S, [{ v: 4, type: 'userMessage', turnId: 'old', content: 'old' }]);
    const r = await rig(w.store);
    const opened = r.exec('agent.openSession', { sessionId: S });
    const d = r.exec('agent.deleteSession', { sessionId: S });
    const again = r.exec('agent.questions', { sessionId: S });
    expect(await d).toEqual({ deleted: true });
    await opened;
    expect(await again).toEqual([]);
    await assertGone(r, w.store, w.calls, 0);
  });
});

describe('approvals racing cancel and reset', () => {
  const resolvedCount = (events: string[]) => events.filter((t) => t === 'questionClosed').length;

  it.each([
    ['cancel', (r: Rig) => r.exec('agent.cancel', { sessionId: S })],
    ['reset', (r: Rig) => r.exec('agent.reset', { sessionId: S })],
  ])(
    '%s first: the approval that follows in the same tick answers APPROVAL_ALREADY_RESOLVED; one resolution in the log',
    async (_name, stop) => {
      const store = createMemoryStore<SessionEvent>();
      const r = await rig(store);
      await waitingForApproval(r);
      const s = stop(r);
      await expect(approve(r)).rejects.toMatchObject({ code: 'APPROVAL_ALREADY_RESOLVED' });
      await s;
      await r.agent.stop();
      expect(r.started).toEqual([]);
      expect(resolvedCount(await types(store))).toBe(1);
      expect((await store.read(S)).find((e) => e.event.type === 'questionClosed')?.event).toMatchObject({
        answer: { decision: 'deny' },
      });
    },
  );

  it.each([
    ['cancel', (r: Rig) => r.exec('agent.cancel', { sessionId: S })],
    ['reset', (r: Rig) => r.exec('agent.reset', { sessionId: S })],
  ])(
    'approval first, %s in the same tick: the approval wins once, its call is aborted; one resolution in the log',
    async (_name, stop) => {
      const store = createMemoryStore<SessionEvent>();
      const r = await rig(store);
      await waitingForApproval(r);
      const a = approve(r);
      const s = stop(r);
      const [approved] = await Promise.allSettled([a, s]);
      r.finishTools();
      await r.agent.stop();
      const events = await types(store);
      expect(resolvedCount(events)).toBe(1);
      const resolved = (await store.read(S)).find((e) => e.event.type === 'questionClosed')?.event;
      if (approved.status === 'fulfilled') expect(resolved).toMatchObject({ answer: { decision: 'approve' } });
      else expect(approved.reason).toMatchObject({ code: 'APPROVAL_ALREADY_RESOLVED' });
      for (const c of r.started) expect(c.signal?.aborted).toBe(true);
    },
  );
});
