import { EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';
import type { SessionStoredEvent } from '../../src/agent/index.ts';
import { factStep } from '../../src/agent/follow/steps.ts';
import { describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { createBus } from '../../src/bus/index.ts';
import type { AppCommands, AppEvents } from '../../src/app/types.ts';
import { scheduleSchema } from '../../src/config/index.ts';
import { AppError } from '../../src/errors/index.ts';
import type { SessionQuota } from '../../src/session-id.ts';
import { memoryScheduleStore } from './schedule-store-contract.ts';
import { createScheduler, type SchedulerOptions } from '../../src/schedules/scheduler.ts';
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
const LIMITS = { perPrincipal: 20, minIntervalMs: 1000, maxMessageBytes: 16_384, queuedRuns: 5 };

/** What the agent did, kept across the harnesses of one test (the scheduler restarted over one store and log). */
interface Agent {
  sent: { sessionId: string; content: string; turnId: string; quota?: SessionQuota }[];
  /** Refuses a message (as the session does one past its holder's sessionsPerPrincipal). */
  refuse?: (sessionId: string) => Error | undefined;
  /** The sessions' stored facts (what their turn indexes answer). */
  log: SessionStoredEvent[];
}

const noTurns = { steps: () => Promise.resolve([]) };

/**
 * A scheduler on a fake clock whose agent stands in for the sessions: a message runs as the turn it names unless the
 * session stored that turn already (then it answers `duplicate`, as decide does); `end(i)` stores the turn's response
 * and emits it; `quiet` only stores it (it ended while no scheduler listened).
 */
function harness(
  store: ScheduleStore = memoryScheduleStore(),
  agent: Agent = { sent: [], log: [] },
  extra: Partial<SchedulerOptions> = {},
) {
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
    const refused = agent.refuse?.(payload.sessionId);
    if (refused) throw refused;
    const { quota } = payload;
    sent.push({ sessionId: payload.sessionId, content: payload.content, turnId, ...(quota && { quota }) });
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
  const scheduler = createScheduler({ store, bus, turns, clock, log, random: () => 0, ...extra });
  return { clock, sent, end, scheduler, store, agent, bus };
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

  it('overlap skip records a tick skipped while the previous turn runs; queue queues it and sends it once that ended', async () => {
    for (const overlap of ['skip', 'queue'] as const) {
      const h = harness();
      await h.scheduler.start([schedule({ everyMs: 1000, overlap })], false);
      h.clock.t = T0 + 1000;
      await h.scheduler.tick();
      h.clock.t = T0 + 2000;
      await h.scheduler.tick();
      expect(h.sent).toHaveLength(1);
      const runs = await h.store.runs('s1', 10);
      expect(runs[0]!.status).toBe(overlap === 'skip' ? 'skipped' : 'queued');
      h.end(0);
      if (overlap === 'queue') {
        await expect.poll(() => h.sent.length).toBe(2);
        expect(h.sent[1]!.content).toBe(`tick ${new Date(T0 + 2000).toISOString()}`);
        await expect
          .poll(async () => (await h.store.runs('s1', 10)).map((r) => r.status))
          .toEqual(['sent', 'finished']);
      }
    }
  });

  it('overlap queue holds at most queuedRuns (one more is skipped, queueFull), sends them in order, and a delete drops them', async () => {
    const limits = { schedules: { ...LIMITS, queuedRuns: 2 }, sessionsPerPrincipal: 100 };
    const h = harness(undefined, undefined, { limits });
    await h.scheduler.start([schedule({ everyMs: 1000, overlap: 'queue' })], false);
    for (let i = 1; i <= 5; i++) {
      h.clock.t = T0 + i * 1000;
      await h.scheduler.tick();
    }
    expect(h.sent).toHaveLength(1);
    const runs = await h.store.runs('s1', 10);
    expect(runs.map((r) => [r.status, r.reason])).toEqual([
      ['skipped', 'queueFull'],
      ['skipped', 'queueFull'],
      ['queued', undefined],
      ['queued', undefined],
      ['sent', undefined],
    ]);
    h.end(0);
    await expect.poll(() => h.sent.length).toBe(2);
    expect(h.sent[1]!.content).toBe(`tick ${new Date(T0 + 2000).toISOString()}`); // the oldest queued first
    await h.scheduler.remove('s1');
    h.end(1);
    await h.scheduler.stop(); // every record and send under way settled
    expect(h.sent).toHaveLength(2); // the run queued at T0 + 3000 never reached the session
    expect(await h.store.runs('s1', 10)).toEqual([]);
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
      const store = memoryScheduleStore();
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
    const store = memoryScheduleStore();
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
    const store = memoryScheduleStore();
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
    const store = memoryScheduleStore();
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
    const store = memoryScheduleStore();
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
    const store = memoryScheduleStore();
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

  it('looks again once a poll later, not at once, while its store fails, and logs that once (the chaos run found it spinning)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const h = harness();
      await h.scheduler.start([schedule({ everyMs: 1000 })]);
      h.clock.t += 5000; // a tick is due
      let looks = 0;
      h.store.schedules = () => (looks++, Promise.reject(new Error('The client is offline')));
      await vi.advanceTimersByTimeAsync(3000);
      expect(looks).toBeGreaterThan(0);
      expect(looks).toBeLessThanOrEqual(4); // about one a second, not one per turn of the event loop
      await h.scheduler.stop();
    } finally {
      vi.useRealTimers();
    }
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
        store: memoryScheduleStore(),
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

  it("a capped schedule's sessions are created under its holder's sessionsPerPrincipal; a refused one fails its run, with the reason", async () => {
    const limits = { schedules: LIMITS, sessionsPerPrincipal: 3 };
    const agent: Agent = { sent: [], log: [] };
    const h = harness(undefined, agent, { limits });
    const capped = { ...schedule({ everyMs: 1000, session: 'run-{{firedAt}}' }), quotaHolder: 'alice' };
    await h.scheduler.start([capped, { ...schedule({ everyMs: 1000 }), id: 'trusted' }], false);
    h.clock.t = T0 + 1000;
    await h.scheduler.tick();
    expect(h.sent.map((m) => m.quota)).toEqual([{ holder: 'alice', limit: 3 }, undefined]);
    h.end(0);
    h.end(1);
    await expect.poll(async () => (await h.store.runs('s1', 1))[0]?.status).toBe('finished');
    agent.refuse = (sessionId) =>
      sessionId.startsWith('run-')
        ? new AppError('RATE_LIMIT_EXCEEDED', 'At most 3 sessions per principal; delete one to make room', { limit: 3 })
        : undefined;
    h.clock.t = T0 + 2000;
    await h.scheduler.tick();
    expect((await h.store.runs('s1', 1))[0]).toMatchObject({
      status: 'failed',
      session: `run-${new Date(T0 + 2000).toISOString()}`,
      reason: 'RATE_LIMIT_EXCEEDED: At most 3 sessions per principal; delete one to make room',
    });
  });

  it('suspends the kept schedules past the caps as they are now: one warning, nothing fired; a delete frees room', async () => {
    const limits = { schedules: { ...LIMITS, perPrincipal: 2, maxMessageBytes: 32 }, sessionsPerPrincipal: 100 };
    const lines: string[] = [];
    const warnLog = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const h = harness(undefined, undefined, { limits, log: warnLog });
    const kept = (id: string, owner: string, at: number, over: Record<string, unknown> = {}): StoredSchedule => ({
      ...schedule({ id, everyMs: 1000, session: `${id}-runs`, ...over }),
      owner,
      quotaHolder: owner,
      createdAt: new Date(T0 + at).toISOString(),
    });
    await h.scheduler.start(
      [
        kept('c', 'alice', 2),
        kept('a', 'alice', 0),
        kept('b', 'alice', 1),
        kept('fast', 'bob', 0, { everyMs: 250 }),
        kept('long', 'bob', 1, { message: 'x'.repeat(33) }),
      ],
      false,
    );
    const reasons = ['alice/c', 'bob/fast', 'bob/long', 'alice/a'].map((k) => h.scheduler.suspension(k)?.reason);
    expect(reasons).toEqual(['schedules_per_principal', 'min_interval', 'message_too_large', undefined]);
    const warnings = lines
      .map((l) => JSON.parse(l) as { level: number; suspended?: unknown[] })
      .filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.suspended).toEqual([
      { schedule: 'c', owner: 'alice', holder: 'alice', reason: 'schedules_per_principal', limit: 2 },
      { schedule: 'fast', owner: 'bob', holder: 'bob', reason: 'min_interval', limit: 1000 },
      { schedule: 'long', owner: 'bob', holder: 'bob', reason: 'message_too_large', limit: 32 },
    ]);
    let ended = 0;
    const tickAt = async (t: number) => {
      h.clock.t = T0 + t;
      await h.scheduler.tick();
      while (ended < h.sent.length) h.end(ended++, true);
    };
    for (let t = 250; t <= 1000; t += 250) await tickAt(t);
    const sessions = (from: number) =>
      h.sent
        .slice(from)
        .map((m) => m.sessionId.split('\u0000').at(-1))
        .sort();
    expect(sessions(0)).toEqual(['a-runs', 'b-runs']);
    await h.scheduler.remove('alice/a'); // room for the next oldest
    expect(h.scheduler.suspension('alice/c')).toBeUndefined();
    await tickAt(2000);
    expect(sessions(2)).toEqual(['b-runs', 'c-runs']);
    expect(lines.filter((l) => l.includes('"level":40'))).toHaveLength(1);
  });

  describe('daylight saving time in Europe/Berlin, on a clock set to each transition day', () => {
    const berlin = (id: string, cron: string) => ({ ...schedule({ cron, timezone: 'Europe/Berlin' }), id });
    const zoned = [
      berlin('listed', '15,45 2 * * *'),
      berlin('half-hours', '*/30 2 * * *'),
      berlin('hourly', '0 * * * *'),
    ];
    /** Runs the scheduler from `from` to `to` (ISO), its clock stepped a minute at a time, each turn ending at once. */
    async function fired(from: string, to: string): Promise<Record<string, string[]>> {
      const h = harness();
      h.clock.t = Date.parse(from);
      await h.scheduler.start(zoned, false);
      let ended = 0;
      for (; h.clock.t <= Date.parse(to); h.clock.t += 60_000) {
        await h.scheduler.tick();
        while (ended < h.sent.length) h.end(ended++, true);
      }
      const runs = async (id: string) => (await h.store.runs(id, 50)).map((r) => r.plannedAt).reverse();
      return { listed: await runs('listed'), 'half-hours': await runs('half-hours'), hourly: await runs('hourly') };
    }

    it('spring forward (2026-03-29, 02:00 CET → 03:00 CEST): each listed time the clocks skip fires once, at 03:00', async () => {
      expect(await fired('2026-03-28T22:30:00Z', '2026-03-29T02:30:00Z')).toEqual({
        listed: ['2026-03-29T01:00:00.000Z'], // 02:15 and 02:45 → 03:00 CEST, once
        'half-hours': ['2026-03-29T01:00:00.000Z'], // 02:00 and 02:30 → 03:00 CEST, once
        // an hourly rhythm follows the clock: 00:00, 01:00 CET, then 03:00 (no 02:00 that day), 04:00 CEST
        hourly: [
          '2026-03-28T23:00:00.000Z',
          '2026-03-29T00:00:00.000Z',
          '2026-03-29T01:00:00.000Z',
          '2026-03-29T02:00:00.000Z',
        ],
      });
    });

    it('fall back (2026-10-25, 03:00 CEST → 02:00 CET): each listed time of the repeated hour fires once, in its first pass', async () => {
      expect(await fired('2026-10-24T22:30:00Z', '2026-10-25T02:30:00Z')).toEqual({
        listed: ['2026-10-25T00:15:00.000Z', '2026-10-25T00:45:00.000Z'], // 02:15 and 02:45 CEST only
        'half-hours': ['2026-10-25T00:00:00.000Z', '2026-10-25T00:30:00.000Z'], // 02:00 and 02:30 CEST only
        // an hourly rhythm follows the clock: 02:00 CEST and 02:00 CET are an hour apart, both fired
        hourly: [
          '2026-10-24T23:00:00.000Z',
          '2026-10-25T00:00:00.000Z',
          '2026-10-25T01:00:00.000Z',
          '2026-10-25T02:00:00.000Z',
        ],
      });
    });
  });
});
