import { EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';
import type { SessionStoredEvent } from '../../src/agent/index.ts';
import { factStep } from '../../src/agent/follow/steps.ts';
import { describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { createBus } from '../../src/bus/index.ts';
import type { AppCommands, AppEvents } from '../../src/app/types.ts';
import { scheduleSchema } from '../../src/config/index.ts';
import { createMemoryScheduleStore } from '../../src/schedules/memory-schedule-store.ts';
import { createScheduler } from '../../src/schedules/scheduler.ts';
import { fireTurnId } from '../../src/schedules/overlap.ts';
import type { ScheduleStore, StoredSchedule } from '../../src/schedules/store-types.ts';
import { fillTemplate, ticksOf } from '../../src/schedules/ticks.ts';

const log = pino({ level: process.env.DEBUG_LOG ?? 'silent' });
const T0 = Date.parse('2026-11-27T09:00:00.000Z');

const schedule = (over: Record<string, unknown>): StoredSchedule => ({
  ...scheduleSchema.parse({ id: 's1', message: 'tick {{firedAt}}', ...over }),
  owner: '',
  source: 'api',
  createdAt: new Date(T0).toISOString(),
});

const USAGE = { promptTokens: 5, completionTokens: 2, totalTokens: 7 };

/** What the agent did, kept across the harnesses of one test (the scheduler restarted over one store and log). */
interface Agent {
  sent: { sessionId: string; content: string; turnId: string }[];
  /** The sessions' stored facts (what their turn indexes answer). */
  log: SessionStoredEvent[];
}

const noTurns = { steps: () => Promise.resolve([]) };

/**
 * A scheduler on a fake clock whose agent stands in for the sessions: a message runs as the turn it names unless the
 * session stored that turn already (then it answers `duplicate`, as decide does); `end(i)` stores the turn's response
 * and emits it; `quiet` only stores it (it ended while no scheduler listened).
 */
function harness(store: ScheduleStore = createMemoryScheduleStore(), agent: Agent = { sent: [], log: [] }) {
  const clock = { t: T0, now: () => clock.t };
  const bus = createBus<AppCommands, AppEvents>({ log });
  const { sent } = agent;
  const storedFact = (sessionId: string, event: SessionEvent): SessionStoredEvent => {
    const s = { sessionId, seq: agent.log.length + 1, ts: new Date(clock.t).toISOString(), event };
    agent.log.push(s);
    return s;
  };
  bus.handle('agent.sendMessage', ({ payload }) => {
    const turnId = payload.turnId ?? `turn-${sent.length + 1}`;
    const known = agent.log.some(
      (s) => s.sessionId === payload.sessionId && 'turnId' in s.event && s.event.turnId === turnId,
    );
    if (known) return { turnId, queued: false, duplicate: true };
    sent.push({ sessionId: payload.sessionId, content: payload.content, turnId });
    storedFact(payload.sessionId, { v: EVENT_VERSION, type: 'userMessage', turnId, content: payload.content });
    return { turnId, queued: false };
  });
  const turns = {
    steps: (sessionId: string, turnId: string) =>
      Promise.resolve(
        agent.log
          .filter((s) => s.sessionId === sessionId && 'turnId' in s.event && s.event.turnId === turnId)
          .map(factStep),
      ),
  };
  const end = (i: number, quiet = false) => {
    const s = sent[i]!;
    const event: SessionEvent = {
      v: EVENT_VERSION,
      type: 'response',
      turnId: s.turnId,
      content: 'ok',
      text: 'ok',
      model: 'm',
      usage: USAGE,
    };
    const fact = storedFact(s.sessionId, event);
    if (!quiet) bus.emit('agent.stored', fact);
  };
  const scheduler = createScheduler({ store, bus, turns, clock, log, random: () => 0 });
  return { clock, sent, end, scheduler, store, agent };
}

describe('ticks', () => {
  it('reads 6-field cron with seconds first, in a time zone, and intervals from the epoch', () => {
    const everySecond = ticksOf({ cron: '*/1 * * * * *' });
    expect(everySecond.next(T0)).toBe(T0 + 1000);
    const nine = ticksOf({ cron: '0 9 * * *', timezone: 'Europe/Paris' });
    expect(new Date(nine.next(T0)!).toISOString()).toBe('2026-11-28T08:00:00.000Z');
    expect(new Date(nine.latest(T0)!).toISOString()).toBe('2026-11-27T08:00:00.000Z');
    const every = ticksOf({ everyMs: 250 });
    expect([every.next(T0 + 1), every.latest(T0 + 249)]).toEqual([T0 + 250, T0]);
  });
  it('fills templates with the tick', () => {
    expect(fillTemplate('daily-{{date}} {{id}} {{firedAt}}', 'x', T0)).toBe(
      'daily-2026-11-27 x 2026-11-27T09:00:00.000Z',
    );
  });
  it('refuses a bad expression, zone or pair, and a missing message', () => {
    const issue = (input: object) =>
      scheduleSchema.safeParse({ id: 'a', message: 'm', ...input }).error?.issues[0]?.path;
    expect(issue({ cron: 'every day' })).toEqual(['cron']);
    expect(issue({ cron: '* * * * * * *' })).toEqual(['cron']);
    expect(issue({ cron: '* * * * *', timezone: 'Mars/Olympus' })).toEqual(['timezone']);
    expect(issue({ cron: '* * * * *', everyMs: 1000 })).toEqual(['everyMs']);
    expect(issue({})).toEqual(['cron']);
    expect(issue({ everyMs: 1000, session: `${'s'.repeat(110)}-{{firedAt}}` })).toEqual(['session']);
    expect(issue({ everyMs: 1000, session: `${'s'.repeat(100)}-{{firedAt}}` })).toBeUndefined();
    expect(scheduleSchema.safeParse({ id: 'a', cron: '* * * * *' }).error?.issues[0]?.path).toEqual(['message']);
  });
});

describe('scheduler', () => {
  it('fires each due tick once, into the session template, and records the run with its end', async () => {
    const h = harness();
    await h.scheduler.start([schedule({ cron: '*/1 * * * * *', session: 'run-{{date}}' })], false);
    for (let i = 1; i <= 3; i++) {
      h.clock.t = T0 + i * 1000;
      await h.scheduler.tick();
      await h.scheduler.tick(); // nothing more is due
      h.end(i - 1);
      await expect.poll(async () => (await h.store.runs('s1', 1))[0]?.status).toBe('finished');
    }
    expect(h.sent.map((s) => s.content)).toEqual([1, 2, 3].map((i) => `tick ${new Date(T0 + i * 1000).toISOString()}`));
    expect(h.sent[0]!.sessionId).toBe('run-2026-11-27');
    await expect
      .poll(async () => (await h.store.runs('s1', 10)).map((r) => r.status))
      .toEqual(['finished', 'finished', 'finished']);
    expect((await h.store.runs('s1', 1))[0]).toMatchObject({ usage: USAGE, finishedAt: expect.any(String) });
  });

  it('overlap skip records a tick skipped while the previous turn runs; queue sends it', async () => {
    for (const overlap of ['skip', 'queue'] as const) {
      const h = harness();
      await h.scheduler.start([schedule({ everyMs: 1000, overlap })], false);
      h.clock.t = T0 + 1000;
      await h.scheduler.tick();
      h.clock.t = T0 + 2000;
      await h.scheduler.tick();
      expect(h.sent).toHaveLength(overlap === 'skip' ? 1 : 2);
      const runs = await h.store.runs('s1', 10);
      expect(runs[0]!.status).toBe(overlap === 'skip' ? 'skipped' : 'sent');
    }
  });

  it('overlap skip holds every tick while the first run is unfinished (not only the next), and fires once it ended', async () => {
    const h = harness();
    await h.scheduler.start([schedule({ everyMs: 1000 })], false);
    for (const t of [1000, 2000, 3000]) {
      h.clock.t = T0 + t;
      await h.scheduler.tick();
    }
    expect(h.sent).toHaveLength(1);
    h.end(0);
    await expect.poll(async () => (await h.store.runs('s1', 10)).at(-1)?.status).toBe('finished');
    h.clock.t = T0 + 4000;
    await h.scheduler.tick();
    expect(h.sent).toHaveLength(2);
    expect((await h.store.runs('s1', 10)).map((r) => r.status)).toEqual(['sent', 'skipped', 'skipped', 'finished']);
  });

  it('after downtime, catchUp none skips the missed ticks and last fires the latest once; a restart never fires a tick twice', async () => {
    for (const catchUp of ['none', 'last'] as const) {
      const store = createMemoryScheduleStore();
      const first = harness(store);
      const s = schedule({ everyMs: 1000, catchUp });
      await first.scheduler.start([s], false);
      first.clock.t = T0 + 1000;
      await first.scheduler.tick();
      await first.scheduler.stop();
      const second = harness(store);
      second.clock.t = T0 + 5500; // ticks 2000..5000 missed
      await second.scheduler.start([s], false);
      await second.scheduler.tick();
      const planned = (await store.runs('s1', 10)).map((r) => r.plannedAt);
      expect(planned).toEqual(
        catchUp === 'last'
          ? [new Date(T0 + 5000).toISOString(), new Date(T0 + 1000).toISOString()]
          : [new Date(T0 + 1000).toISOString()],
      );
      const third = harness(store);
      third.clock.t = T0 + 5500;
      await third.scheduler.start([s], false);
      expect(third.sent).toHaveLength(0);
    }
  });

  it('a fire recorded but never sent is sent once on the next start', async () => {
    const store = createMemoryScheduleStore();
    const s = schedule({ everyMs: 1000 });
    await store.saveSchedule(s);
    await store.claim('s1', T0 - 1000);
    const h = harness(store);
    await h.scheduler.start([], false);
    expect(h.sent).toHaveLength(1);
    expect((await store.runs('s1', 1))[0]).toMatchObject({ status: 'sent', turnId: fireTurnId('s1', T0 - 1000) });
    const again = harness(store);
    await again.scheduler.start([], false);
    expect(again.sent).toHaveLength(0);
  });

  it('a fire whose message was stored before its start died is recorded sent on the next start, not sent again', async () => {
    const store = createMemoryScheduleStore();
    const s = schedule({ everyMs: 1000 });
    await store.saveSchedule(s);
    await store.claim('s1', T0 - 1000);
    const turnId = fireTurnId('s1', T0 - 1000);
    const message: SessionEvent = { v: EVENT_VERSION, type: 'userMessage', turnId, content: 'tick' };
    const agent: Agent = {
      sent: [],
      log: [{ sessionId: 'schedule-s1', seq: 1, ts: new Date(T0).toISOString(), event: message }],
    };
    const h = harness(store, agent);
    await h.scheduler.start([], false);
    expect(h.sent).toHaveLength(0);
    expect((await store.runs('s1', 1))[0]).toMatchObject({ status: 'sent', turnId });
  });

  it("overlap skip holds ticks while another instance's claim is being sent, not after it is a minute old", async () => {
    const h = harness();
    h.clock.t = T0 + 1500;
    await h.scheduler.start([schedule({ everyMs: 1000 })], false);
    await h.store.claim('s1', T0 + 1000); // another instance claimed a tick and sends it
    h.clock.t = T0 + 2000;
    await h.scheduler.tick();
    expect(h.sent).toHaveLength(0);
    expect((await h.store.runs('s1', 1))[0]!.status).toBe('skipped');
    h.clock.t = T0 + 62_000; // that instance died: its claim is sent at the next start
    await h.scheduler.tick();
    expect(h.sent).toHaveLength(1);
  });

  it('a paused schedule does not fire', async () => {
    const h = harness();
    await h.scheduler.start([schedule({ everyMs: 1000, paused: true })], false);
    h.clock.t = T0 + 3000;
    await h.scheduler.tick();
    expect(h.sent).toHaveLength(0);
  });

  it('records a run left sent by an earlier start ended: off its log at start, or when its turn ends later', async () => {
    const store = createMemoryScheduleStore();
    const first = harness(store);
    const s = schedule({ everyMs: 1000, overlap: 'queue' });
    await first.scheduler.start([s], false);
    for (const t of [1000, 2000]) {
      first.clock.t = T0 + t;
      await first.scheduler.tick();
    }
    await first.scheduler.stop();
    first.end(0, true); // the first turn ends with no scheduler listening; the second is still running
    const second = harness(store, first.agent);
    second.clock.t = T0 + 2500;
    await second.scheduler.start([s], false);
    await expect.poll(async () => (await store.runs('s1', 10)).map((r) => r.status)).toEqual(['sent', 'finished']);
    expect((await store.runs('s1', 10))[1]).toMatchObject({ turnId: first.sent[0]!.turnId, usage: USAGE });
    second.end(1);
    await expect.poll(async () => (await store.runs('s1', 10)).map((r) => r.status)).toEqual(['finished', 'finished']);
  });

  it("overlap skip finds the previous run's end in its log when no one heard it, and fires", async () => {
    const store = createMemoryScheduleStore();
    const first = harness(store);
    const s = schedule({ everyMs: 1000 });
    await first.scheduler.start([s], false);
    first.clock.t = T0 + 1000;
    await first.scheduler.tick();
    await first.scheduler.stop();
    const second = harness(store, first.agent);
    second.clock.t = T0 + 1500;
    await second.scheduler.start([s], false); // the run is still unfinished: followed
    first.end(0, true); // ...and its end is stored where the second one does not hear it
    second.clock.t = T0 + 2000;
    await second.scheduler.tick();
    expect(first.agent.sent).toHaveLength(2);
    await expect.poll(async () => (await store.runs('s1', 10)).map((r) => r.status)).toEqual(['sent', 'finished']);
  });

  it('waits a random part of jitterMs after the tick before sending', async () => {
    const store = createMemoryScheduleStore();
    const agent: Agent = { sent: [], log: [] };
    const clock = { t: T0, now: () => clock.t };
    const bus = createBus<AppCommands, AppEvents>({ log });
    bus.handle('agent.sendMessage', ({ payload }) => {
      agent.sent.push({ sessionId: payload.sessionId, content: payload.content, turnId: 't' });
      return { turnId: 't', queued: false };
    });
    const scheduler = createScheduler({ store, bus, turns: noTurns, clock, log, random: () => 0.5 });
    await scheduler.start([schedule({ everyMs: 1000, jitterMs: 400 })], false);
    clock.t = T0 + 1000;
    const started = performance.now();
    await scheduler.tick();
    expect(agent.sent).toHaveLength(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
  });

  it('sets no timer while no schedule exists on a store only it writes; one made over the API starts it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const h = harness();
      await h.scheduler.start([]);
      expect(vi.getTimerCount()).toBe(0);
      await h.scheduler.put(schedule({ everyMs: 1000 }));
      expect(vi.getTimerCount()).toBe(1);
      await h.scheduler.remove('s1');
      await vi.advanceTimersByTimeAsync(1000); // its look finds none armed...
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(vi.getTimerCount()).toBe(0); // ...and sets no timer again
      await h.scheduler.stop();
      const shared = createScheduler({
        store: createMemoryScheduleStore(),
        bus: createBus<AppCommands, AppEvents>({ log }),
        turns: noTurns,
        clock: h.clock,
        log,
        shared: true,
      });
      await shared.start([]);
      expect(vi.getTimerCount()).toBe(1); // another instance may make one
      await shared.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
