/**
 * The reactions' contract (src/agent/react/reactions.ts), run on every record-store engine their checkpoints can live
 * on (reactions.test.ts): live facts handled once in order, checkpoints written when a reaction acted, a catch-up after
 * a crash handles only what the checkpoint does not cover, a failed fact is retried at the next open, and a session's
 * checkpoint goes with it; and the service's reactions on that medium (`serviceReactionsContract`): each acts once on
 * a fact handed on twice (a crash between its write and its checkpoint).
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createReactions, type Reaction, type SessionStoredEvent } from '../../src/agent/index.ts';
import type { RecordStore } from '../../src/store/records/index.ts';
import { EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';
import { fireEndsReaction } from '../../src/schedules/fire-ends.ts';
import { nextFire } from '../../src/schedules/fire-state.ts';
import { createRecordScheduleStore } from '../../src/schedules/record-schedule-store.ts';
import { fireTurnId } from '../../src/schedules/store-types.ts';
import { createLedger, spendReaction } from '../../src/spend/index.ts';
import { createPushDeliveries } from '../../src/a2a-face/push/deliveries.ts';
import { factStep } from '../../src/agent/follow/steps.ts';
import { deliveriesLimitsSchema } from '../../src/config/deliveries-schema.ts';
import { createOutboxStore } from '../../src/webhooks/index.ts';
import { createWebhookService } from '../../src/webhooks/service.ts';
import type { WebhookCommands } from '../../src/webhooks/messages.ts';
import type { AgentEvents } from '../../src/agent/index.ts';
import { createBus } from '../../src/bus/index.ts';
import { systemClock } from '../../src/clock.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import { facts, stored } from '../support/facts.ts';

const log = pino({ level: 'silent' });

export interface ReactionsMedium {
  store: RecordStore;
  /** The medium as another process sees it after this one died (a new store over it). */
  reopen: () => RecordStore;
}

/** A reaction that records what it handled; it acts on responses, and throws on the seqs in `failing`. */
function recording(name = 'hooks', failing = new Set<number>()) {
  const handled: number[] = [];
  const reaction: Reaction = {
    name,
    handle(s) {
      if (failing.has(s.seq)) throw new Error(`cannot handle ${s.seq}`);
      handled.push(s.seq);
      return s.event.type === 'response';
    },
  };
  return { reaction, handled, failing };
}

let clockAt = Date.parse('2026-11-28T10:00:00Z');
const now = () => clockAt;
const at = (ms: number) => new Date(ms).toISOString();

/** A turn's two facts in session `id` from `seq`, stored now. */
const turn = (id: string, seq: number, turnId: string): SessionStoredEvent[] => [
  stored(facts.user(turnId), seq, at(clockAt), id),
  stored(facts.response(turnId, 'done'), seq + 1, at(clockAt), id),
];

const opened = (loaded: SessionStoredEvent[], log: SessionStoredEvent[] = loaded) => ({
  loaded,
  lastSeq: loaded.at(-1)?.seq ?? 0,
  read: (since: number) => Promise.resolve(log.filter((s) => s.seq > since)),
});

export function reactionsContract(engine: string, medium: () => Promise<ReactionsMedium>) {
  describe(`reactions on the ${engine} record store`, () => {
    const stores: RecordStore[] = [];
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
    });
    const open = async (store: RecordStore, ...reactions: Reaction[]) => {
      stores.push(store);
      await store.open();
      return createReactions({ reactions, records: store, log, now });
    };

    it('hand each live fact on once, in order, and keep a checkpoint once a reaction acted', async () => {
      const { store, reopen } = await medium();
      const hooks = recording();
      const reactions = await open(store, hooks.reaction);
      const session = reactions.forSession('live');
      session.catchUp(opened([]));
      const facts = turn('live', 1, 't1');
      for (const f of facts) session.stored(f);
      expect(await session.settled()).toBe(true);
      expect(hooks.handled).toEqual([1, 2]);
      await store.close();
      // A process that opens the session later hears nothing again: the checkpoint covers both.
      const again = recording();
      const next = await open(reopen(), again.reaction);
      const later = next.forSession('live');
      later.catchUp(opened(facts));
      expect(await later.settled()).toBe(true);
      expect(again.handled).toEqual([]);
    });

    it('catch up after a crash: only the facts after the checkpoint, once', async () => {
      const { store, reopen } = await medium();
      const first = recording();
      const one = (await open(store, first.reaction)).forSession('crash');
      one.catchUp(opened([]));
      const before = turn('crash', 1, 't1');
      for (const f of before) one.stored(f);
      await one.settled();
      // The next turn is stored, but the process dies before its facts are handed on (and its checkpoint written).
      const lost = turn('crash', 3, 't2');
      await store.close();
      const second = recording();
      const two = (await open(reopen(), second.reaction)).forSession('crash');
      two.catchUp(opened([...before, ...lost]));
      expect(await two.settled()).toBe(true);
      expect(second.handled).toEqual([3, 4]);
    });

    it('a fact a reaction failed is retried at the next open, and the others go on', async () => {
      const { store, reopen } = await medium();
      const failing = recording('hooks', new Set([2]));
      const other = recording('push');
      const session = (await open(store, failing.reaction, other.reaction)).forSession('fails');
      session.catchUp(opened([]));
      const facts = turn('fails', 1, 't1');
      for (const f of facts) session.stored(f);
      expect(await session.settled()).toBe(false); // stuck: the session's open-turn mark stays
      await session.close();
      expect(failing.handled).toEqual([1]);
      expect(other.handled).toEqual([1, 2]);
      await store.close();
      const retried = recording('hooks');
      const pushAgain = recording('push');
      const next = (await open(reopen(), retried.reaction, pushAgain.reaction)).forSession('fails');
      next.catchUp(opened(facts));
      expect(await next.settled()).toBe(true);
      expect(retried.handled).toEqual([2]);
      expect(pushAgain.handled).toEqual([]);
    });

    it('a fact a reaction failed is tried again from the log before the next fact, and at retry (the store is back)', async () => {
      const { store } = await medium();
      const flaky = recording('hooks', new Set([2]));
      const other = recording('push');
      const session = (await open(store, flaky.reaction, other.reaction)).forSession('flaps');
      const log: SessionStoredEvent[] = [];
      session.catchUp(opened([], log));
      const tell = (f: SessionStoredEvent) => (log.push(f), session.stored(f));
      turn('flaps', 1, 't1').forEach(tell);
      expect(await session.settled()).toBe(false);
      flaky.failing.clear(); // the medium is back
      turn('flaps', 3, 't2').forEach(tell);
      expect(await session.settled()).toBe(true);
      expect(flaky.handled).toEqual([1, 2, 3, 4]);
      expect(other.handled).toEqual([1, 2, 3, 4]);

      flaky.failing.add(6);
      turn('flaps', 5, 't3').forEach(tell);
      expect(await session.settled()).toBe(false);
      flaky.failing.clear();
      session.retry();
      expect(await session.settled()).toBe(true);
      expect(flaky.handled).toEqual([1, 2, 3, 4, 5, 6]);
      await session.close();
    });

    it('a log older than the reactions is not announced: a session with no checkpoint starts at their start', async () => {
      const { store } = await medium();
      const old = turn('old', 1, 't1').map((f) => ({ ...f, ts: at(clockAt - 60_000) }));
      const hooks = recording();
      const reactions = await open(store, hooks.reaction);
      const session = reactions.forSession('old');
      clockAt += 1_000;
      const fresh = turn('old', 3, 't2');
      session.catchUp(opened([...old, ...fresh]));
      expect(await session.settled()).toBe(true);
      expect(hooks.handled).toEqual([3, 4]);
    });

    it('read what lies before a compacted open when the checkpoint is older', async () => {
      const { store, reopen } = await medium();
      const first = recording();
      const one = (await open(store, first.reaction)).forSession('compacted');
      one.catchUp(opened([]));
      const all = [...turn('compacted', 1, 't1'), ...turn('compacted', 3, 't2'), ...turn('compacted', 5, 't3')];
      for (const f of all.slice(0, 2)) one.stored(f);
      await one.settled();
      await store.close();
      const second = recording();
      const two = (await open(reopen(), second.reaction)).forSession('compacted');
      two.catchUp(opened(all.slice(4), all)); // the open read from seq 5 only
      expect(await two.settled()).toBe(true);
      expect(second.handled).toEqual([3, 4, 5, 6]);
    });

    it('a checkpoint only moves forward: an owner behind a newer one written since it read keeps the newer one', async () => {
      const { store, reopen } = await medium();
      const all = [...turn('forward', 1, 't1'), ...turn('forward', 3, 't2')];
      // A paused owner opened the session and read no checkpoint; a new owner (on the same medium) then handled both.
      const paused = (await open(store, recording().reaction)).forSession('forward');
      paused.catchUp(opened([]));
      expect(await paused.settled()).toBe(true);
      const taker = (await open(store, recording().reaction)).forSession('forward');
      taker.catchUp(opened([]));
      all.forEach((f) => taker.stored(f));
      await taker.close();
      // The paused owner wakes up with the first turn only: its write meets the newer checkpoint and keeps it.
      all.slice(0, 2).forEach((f) => paused.stored(f));
      await paused.close();
      const later = recording();
      const next = (await open(reopen(), later.reaction)).forSession('forward');
      next.catchUp(opened(all));
      expect(await next.settled()).toBe(true);
      expect(later.handled).toEqual([]);
    });

    it("forget a deleted session's checkpoint", async () => {
      const { store, reopen } = await medium();
      const hooks = recording();
      const reactions = await open(store, hooks.reaction);
      const session = reactions.forSession('gone');
      session.catchUp(opened([]));
      for (const f of turn('gone', 1, 't1')) session.stored(f);
      await session.close();
      expect(await reactions.forget('gone')).toBe(true);
      await store.close();
      const after = reopen();
      await after.open();
      expect(await after.get('reaction-checkpoints', 'gone')).toBeUndefined();
      await after.close();
    });
  });
}

/**
 * The service's reactions on one record-store engine: each acts on its fact once however often the fact is handed on
 * (a crash between the reaction's write and its checkpoint hands it on again), and its effect is kept once.
 * (webhooks' handing on again after a real crash is also test/int/webhooks.test.ts'; the outbox's own contract, an id
 * added once, is outbox-store-contract.ts'.)
 */
export function serviceReactionsContract(engine: string, medium: () => Promise<ReactionsMedium>) {
  describe(`the service's reactions on the ${engine} record store`, () => {
    const ts = '2026-11-29T09:00:05.000Z';
    const usage = { promptTokens: 5, completionTokens: 2, totalTokens: 7 };
    const response = (turnId: string, priced = false): SessionEvent => ({
      ...{ v: EVENT_VERSION, type: 'response', turnId, content: 'done', text: 'done', model: 'm' },
      usage: priced ? { ...usage, cost: { amount: 0.1, currency: 'EUR', source: 'config' } } : usage,
    });
    const twice = async (reaction: Reaction, fact: SessionStoredEvent) => [
      await reaction.handle(fact),
      await reaction.handle(fact),
    ];

    it('spend: a priced step handed on twice is one ledger entry', async () => {
      const { store } = await medium();
      await store.open();
      const reaction = spendReaction(createLedger(store, { timeZone: 'UTC', log }));
      expect(await twice(reaction, stored(response('t1', true), 3, ts, 'alice/s'))).toEqual([true, false]);
      expect(await store.get('spend', 'alice/s#3')).toBeDefined();
      await store.close();
    });

    it("schedules: a fire's turn end handed on twice is one end", async () => {
      const { store } = await medium();
      await store.open();
      const schedules = createRecordScheduleStore({ records: store, log });
      const planned = Date.parse('2026-11-29T09:00:00.000Z');
      await schedules.claim('s1', planned);
      const turnId = fireTurnId('s1', planned);
      const sent = { type: 'sent', session: 'runs', turnId, firedAt: ts } as const;
      await schedules.change({ scheduleId: 's1', plannedAt: new Date(planned).toISOString() }, (f) =>
        nextFire(f, sent),
      );
      let ended = 0;
      const reaction = fireEndsReaction({ store: schedules, metrics: undefined, ended: () => void ended++ });
      expect(await twice(reaction, stored(response(turnId), 4, ts, 'runs'))).toEqual([true, false]);
      expect(ended).toBe(1);
      expect((await schedules.runs('s1', 10)).map((r) => r.status)).toEqual(['finished']);
      await store.close();
    });

    it("webhooks: a turn's end handed on twice is one delivery per webhook", async () => {
      const { store } = await medium();
      await store.open();
      const config = agentConfigSchema.parse({
        ...{ llm: { model: 'm' }, storage: { type: 'memory' }, egress: { allowPrivateNetworks: true } },
        webhooks: [
          { id: 'done', url: 'http://127.0.0.1:9/hook', events: ['turn.completed'], secret: `whsec_${'A'.repeat(32)}` },
        ],
      });
      const outbox = createOutboxStore(store, log, { limits: config.server.limits.deliveries });
      const bus = createBus<WebhookCommands, AgentEvents>({ log, clock: systemClock, ids: () => randomUUID() });
      const webhooks = createWebhookService({ config, bus, outbox, clock: { now: () => Date.parse(ts) }, log });
      await webhooks.open();
      expect(await twice(webhooks.reaction, stored(response('t1'), 2, ts, 'alice/s'))).toEqual([true, false]);
      expect(await outbox.ofWebhook('done', 10)).toHaveLength(1);
      await store.close();
    });

    it("a2a-push: a task's end handed on twice is one notification per config", async () => {
      const { store } = await medium();
      await store.open();
      const outbox = createOutboxStore(store, log, { limits: deliveriesLimitsSchema.parse({}) });
      await outbox.open();
      const user = stored(facts.user('t1'), 1, ts, 'alice/s');
      const end = stored(response('t1'), 2, ts, 'alice/s');
      const config = { id: 'c1', url: 'http://127.0.0.1:9/push', version: '1.0' as const, setAt: 0 };
      let added = 0;
      const push = createPushDeliveries({
        follower: { steps: () => Promise.resolve([factStep(user), factStep(end)]) },
        configs: { list: () => Promise.resolve([config]) },
        outbox,
        signer: () => Promise.reject(new Error('not sent here')),
        ...{ issuer: 'agentd', clock: { now: () => Date.parse(ts) }, onAdded: () => void added++ },
      });
      expect(await twice(push.reaction, end)).toEqual([true, false]);
      expect(added).toBe(1);
      expect(await outbox.ofWebhook('a2a-push/c1', 10)).toHaveLength(1);
      await store.close();
    });
  });
}
