/**
 * A turn stopped because its facts could not be stored (its caller was told: `error`, `reason: "storage"`) ended: the
 * log says so too once the store takes writes again (before the session's next fact, or when the session closes), so
 * a session opened from that log (a restart, a cluster's takeover after a Redis outage) does not resume it as a turn
 * its process left running (issue 60: a resumed turn the caller had been told failed ran beside its next message).
 */
import { describe, expect, it } from 'vitest';
import { createAgentService, STORED_EVENT, TAKE_OVER_COMMAND } from '../../src/agent/index.ts';
import type { AppCommands, AppEvents } from '../../src/app.ts';
import { createBus } from '../../src/bus/index.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { AppError } from '../../src/errors/index.ts';
import type { LlmClient } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { sessionKey } from '../../src/session-id.ts';
import { createMemoryStore } from '../../src/store/index.ts';
import type { EventStore } from '../../src/store/types.ts';
import { recordBus } from '../support/bus-recorder.ts';
import { PATIENT } from '../support/wait.ts';

/**
 * A store whose appends fail while `down` (as Redis's do while it is away), or take one and fail it (`lose`: its
 * answer lost); `back()` tells its watcher it is back.
 */
function flakyStore() {
  const store = createMemoryStore<SessionEvent>();
  const append = store.append.bind(store);
  const watchers: { back(): void }[] = [];
  /** `lose`: the next append is taken, then fails for its caller (the store's answer was lost). */
  const medium = { down: false, lose: false, back: () => watchers.forEach((w) => w.back()) };
  const unavailable = () => new AppError('SERVICE_UNAVAILABLE', 'The event store (Redis) is unavailable', {});
  store.append = async (sessionId, events) => {
    if (medium.down) throw unavailable();
    const stored = await append(sessionId, events);
    if (!medium.lose) return stored;
    medium.lose = false;
    throw unavailable();
  };
  store.watchMedium = (watcher) => void watchers.push(watcher);
  return { store, medium };
}

/** An agent over `store` whose model answers `re <message>`, each answer held until the test lets it go. */
function agentOver(store: EventStore<SessionEvent>) {
  const log = createLogger('silent');
  const bus = createBus<AppCommands, AppEvents>({ log });
  const asked: string[] = [];
  const held: (() => void)[] = [];
  const llm: LlmClient = {
    model: 'fake-model',
    async complete(req) {
      const content = String(req.tail?.at(-1)?.content ?? req.messages.at(-1)?.content);
      asked.push(content);
      await new Promise<void>((resolve) => held.push(resolve));
      return { text: `re ${content}`, toolCalls: [], finishReason: 'stop' };
    },
  };
  bus.handle('mcp.modelTools', () => []);
  const config = agentConfigSchema.parse({ llm: { model: 'fake-model' }, storage: { type: 'memory' } });
  const agent = createAgentService({ config, bus, store, llm, log, resumeTurns: 3, orphanedTurnReason: 'owner_lost' });
  const send = (content: string, correlationId: string) =>
    bus.execute('agent.sendMessage', { sessionId: sessionKey(undefined, 's1'), content }, { correlationId });
  const answer = () => {
    for (const resolve of held.splice(0)) resolve();
  };
  return { bus, agent, recorder: recordBus(bus), asked, send, answer };
}

const typesOf = async (store: EventStore<SessionEvent>) =>
  (await store.read('s1')).map((s) => `${s.event.type}:${'turnId' in s.event ? s.event.turnId : ''}`);

/** Runs a turn whose reply cannot be stored: its `userMessage` is in the log, its end is not. */
async function stoppedTurn() {
  const { store, medium } = flakyStore();
  const rig = agentOver(store);
  await rig.agent.start();
  const { turnId } = await rig.send('first', 'a');
  await expect.poll(() => rig.asked, PATIENT).toEqual(['first']);
  medium.down = true;
  rig.answer();
  const end = await rig.recorder.turnEnd('a');
  expect(end).toMatchObject({ name: 'agent.error', payload: { details: { reason: 'storage' } } });
  medium.down = false;
  expect(await typesOf(store)).toEqual([`userMessage:${turnId}`]);
  return { store, medium, rig, turnId };
}

describe('a turn stopped by a storage failure', () => {
  it('is ended in the log as soon as the store says it is back, with no further use of the session (the chaos run found such turns)', async () => {
    const { store, medium, turnId } = await stoppedTurn();
    medium.back();
    await expect.poll(() => typesOf(store), PATIENT).toEqual([`userMessage:${turnId}`, `turnFailed:${turnId}`]);
  });

  it("is ended in the log before the session's next fact, as its caller was told", async () => {
    const { store, rig, turnId } = await stoppedTurn();
    const next = await rig.send('second', 'b');
    await expect.poll(() => rig.asked, PATIENT).toEqual(['first', 'second']);
    rig.answer();
    expect((await rig.recorder.turnEnd('b')).name).toBe('agent.response');
    expect(await typesOf(store)).toEqual([
      `userMessage:${turnId}`,
      `turnFailed:${turnId}`,
      `userMessage:${next.turnId}`,
      `response:${next.turnId}`,
    ]);
    expect((await store.read('s1'))[1]?.event).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'storage' } });
    await rig.agent.stop();
  });

  it('is ended in the log when its session closes, so opening it again resumes nothing', async () => {
    const { store, rig, turnId } = await stoppedTurn();
    await rig.agent.stop();
    expect(await typesOf(store)).toEqual([`userMessage:${turnId}`, `turnFailed:${turnId}`]);

    const again = agentOver(store);
    await again.agent.start();
    await again.bus.execute(TAKE_OVER_COMMAND, { sessionId: sessionKey(undefined, 's1') });
    const next = await again.send('second', 'b');
    await expect.poll(() => again.asked, PATIENT).toEqual(['second']);
    again.answer();
    expect((await again.recorder.turnEnd('b')).name).toBe('agent.response');
    expect((await typesOf(store)).slice(2)).toEqual([`userMessage:${next.turnId}`, `response:${next.turnId}`]);
    await again.agent.stop();
  });
});

describe('a message that could not be stored at all', () => {
  it('leaves the session answering: a reset fails while the store is down and is stored once it is back (one once hung)', async () => {
    const { store, medium } = flakyStore();
    const rig = agentOver(store);
    await rig.agent.start();
    medium.down = true;
    await expect(rig.send('never', 'a')).rejects.toMatchObject({ details: { reason: 'storage' } });
    const sessionId = sessionKey(undefined, 's1');
    await expect(rig.bus.execute('agent.reset', { sessionId })).rejects.toMatchObject({
      details: { reason: 'storage' },
    });
    medium.down = false;
    expect(await rig.bus.execute('agent.reset', { sessionId })).toEqual({ seq: 1 });
    expect(await typesOf(store)).toEqual(['reset:']);
    await rig.agent.stop();
  });
});

describe('queued messages whose turns a storage failure stopped before they were stored as started', () => {
  it('end in the log as their callers were told, once the store is back: none stays queued there (the chaos run found such messages)', async () => {
    const { store, medium } = flakyStore();
    const rig = agentOver(store);
    await rig.agent.start();
    const first = await rig.send('first', 'a');
    await expect.poll(() => rig.asked, PATIENT).toEqual(['first']);
    const second = await rig.send('second', 'b');
    const third = await rig.send('third', 'c');
    expect([second.queued, third.queued]).toEqual([true, true]);
    medium.down = true;
    rig.answer();
    for (const id of ['a', 'b', 'c'])
      expect((await rig.recorder.turnEnd(id)).payload).toMatchObject({ details: { reason: 'storage' } });
    medium.down = false;
    medium.back();
    await expect.poll(async () => (await typesOf(store)).length, PATIENT).toBe(6);
    const log = await typesOf(store);
    expect(log.slice(0, 3)).toEqual([
      `userMessage:${first.turnId}`,
      `messageQueued:${second.turnId}`,
      `messageQueued:${third.turnId}`,
    ]);
    expect(log.slice(3).sort()).toEqual([first, second, third].map((t) => `turnFailed:${t.turnId}`).sort());
    await rig.agent.stop();
    expect(await typesOf(store)).toHaveLength(6); // closing wrote nothing more
  });
});

/** A turn running, and a message queued behind it whose `messageQueued` the store took while its caller heard a failure. */
async function lostQueuedMessage() {
  const { store, medium } = flakyStore();
  const rig = agentOver(store);
  await rig.agent.start();
  const first = await rig.send('first', 'a');
  await expect.poll(() => rig.asked, PATIENT).toEqual(['first']);
  medium.lose = true;
  await expect(rig.send('second', 'b')).rejects.toThrow('could not be stored');
  return { store, medium, rig, first };
}

describe('a write whose answer was lost (the store took it; its caller heard a failure)', () => {
  it('given a queued message so written, when the turn ahead ends, then it runs: the log says it waits (the chaos run found such messages)', async () => {
    const { store, rig, first } = await lostQueuedMessage();
    rig.answer();
    await expect.poll(() => rig.asked, PATIENT).toEqual(['first', 'second']);
    rig.answer();
    await expect
      .poll(() => typesOf(store), PATIENT)
      .toEqual([
        `userMessage:${first.turnId}`,
        expect.stringMatching(/^messageQueued:/),
        `response:${first.turnId}`,
        expect.stringMatching(/^userMessage:/),
        expect.stringMatching(/^response:/),
      ]);
    const ids = (await typesOf(store)).map((t) => t.split(':')[1]);
    expect(ids[3]).toBe(ids[1]); // the queued message's turn is the one that ran
    await rig.agent.stop();
  });

  it('given a queued message so written and nothing stored after it, when the store says it is back, then it runs', async () => {
    const { store, medium, rig, first } = await lostQueuedMessage();
    medium.down = true; // the turn ahead cannot store its end either: no later append finds the lost one
    rig.answer();
    expect((await rig.recorder.turnEnd('a')).payload).toMatchObject({ details: { reason: 'storage' } });
    medium.down = false;
    medium.back();
    await expect.poll(() => rig.asked, PATIENT).toEqual(['first', 'second']);
    rig.answer();
    await expect
      .poll(() => typesOf(store), PATIENT)
      .toEqual([
        `userMessage:${first.turnId}`,
        expect.stringMatching(/^messageQueued:/),
        `turnFailed:${first.turnId}`,
        expect.stringMatching(/^userMessage:/),
        expect.stringMatching(/^response:/),
      ]);
    await rig.agent.stop();
  });

  it('given a turn whose end was so written, when the next message comes before the store says it is back, then the turn keeps its one end (the 10-minute chaos run found two)', async () => {
    const { store, medium } = flakyStore();
    const rig = agentOver(store);
    await rig.agent.start();
    const first = await rig.send('first', 'a');
    await expect.poll(() => rig.asked, PATIENT).toEqual(['first']);
    medium.lose = true; // the reply is stored; its caller hears a failure
    rig.answer();
    expect((await rig.recorder.turnEnd('a')).payload).toMatchObject({ details: { reason: 'storage' } });
    const second = await rig.send('second', 'b');
    await expect.poll(() => rig.asked, PATIENT).toEqual(['first', 'second']);
    rig.answer();
    expect((await rig.recorder.turnEnd('b')).name).toBe('agent.response');
    expect(await typesOf(store)).toEqual([
      `userMessage:${first.turnId}`,
      `response:${first.turnId}`,
      `userMessage:${second.turnId}`,
      `response:${second.turnId}`,
    ]);
    await rig.agent.stop();
    expect(await typesOf(store)).toHaveLength(4);
  });

  it('given a reply so written that the cluster read back (the bus carried it), when the store says it is back, then its frame is not published again (the chaos run saw it twice)', async () => {
    const { store, medium } = flakyStore();
    const rig = agentOver(store);
    await rig.agent.start();
    await rig.send('first', 'a');
    await expect.poll(() => rig.asked, PATIENT).toEqual(['first']);
    medium.lose = true;
    rig.answer();
    expect((await rig.recorder.turnEnd('a')).payload).toMatchObject({ details: { reason: 'storage' } });
    const reply = (await store.read('s1')).find((s) => s.event.type === 'response')!;
    const told = () => rig.recorder.events.filter((e) => e.name === 'agent.response').length;
    rig.bus.emit(STORED_EVENT, reply, { correlationId: 'a' }); // as the cluster's gap repair emits a fact read back
    expect(told()).toBe(1);
    medium.back(); // the session's catch-up finds the reply its write was told had failed
    await expect
      .poll(() => typesOf(store), PATIENT)
      .toEqual([expect.stringMatching(/^userMessage:/), expect.stringMatching(/^response:/)]);
    await rig.agent.stop();
    expect(told()).toBe(1);
  });
});
