import { afterEach, describe, expect, it } from 'vitest';
import type { Delivery, OutboxStore, StoredWebhook } from '../../src/webhooks/outbox-store.ts';
import { DEFAULT_RETRY_SCHEDULE_MS } from '../../src/config/schema.ts';

/**
 * The webhooks' OutboxStore port's contract (src/webhooks/outbox-store.ts); every engine runs it with its own factory.
 * `reopen` (durable engines) opens a second store over the same medium, as a restart or another instance would.
 */
export function outboxStoreContract(
  name: string,
  make: () => Promise<{ store: OutboxStore; reopen?: () => Promise<OutboxStore> }>,
): void {
  describe(`OutboxStore contract: ${name}`, () => {
    const opened: OutboxStore[] = [];
    const subject = async () => {
      const s = await make();
      await s.store.open();
      opened.push(s.store);
      return s;
    };
    const reopened = async (reopen: () => Promise<OutboxStore>) => {
      const store = await reopen();
      await store.open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('keeps one delivery per id: a second add of the same id is refused and changes nothing', async () => {
      const { store } = await subject();
      expect(await store.add(delivery('msg_a'))).toBe(true);
      expect(await store.add({ ...delivery('msg_a'), body: '{"other":true}' })).toBe(false);
      expect((await store.get('msg_a'))?.body).toBe(delivery('msg_a').body);
      const racing = await Promise.all([store.add(delivery('msg_b')), store.add(delivery('msg_b'))]);
      expect(racing.filter(Boolean)).toHaveLength(1);
    });

    it('answers the pending deliveries due, earliest first, and neither finished nor later ones', async () => {
      const { store } = await subject();
      await store.add(delivery('msg_late', { nextAttemptAt: 5_000 }));
      await store.add(delivery('msg_early', { nextAttemptAt: 1_000 }));
      await store.add(delivery('msg_mid', { nextAttemptAt: 2_000 }));
      await store.put({ ...delivery('msg_mid', { nextAttemptAt: 2_000 }), status: 'delivered', deliveredAt: 2_100 });
      expect((await store.due(3_000, 10)).map((d) => d.id)).toEqual(['msg_early']);
      expect((await store.due(9_000, 10)).map((d) => d.id)).toEqual(['msg_early', 'msg_late']);
      expect((await store.due(9_000, 1)).map((d) => d.id)).toEqual(['msg_early']);
    });

    it("lists a webhook's deliveries newest first, with the state put last", async () => {
      const { store } = await subject();
      await store.add(delivery('msg_1', { createdAt: 1 }));
      await store.add(delivery('msg_2', { createdAt: 2 }));
      await store.add(delivery('msg_x', { createdAt: 3, webhookId: 'other' }));
      await store.put({ ...delivery('msg_1', { createdAt: 1 }), attempts: 2, lastError: 'HTTP 503' });
      const listed = await store.ofWebhook('hook', 10);
      expect(listed.map((d) => d.id)).toEqual(['msg_2', 'msg_1']);
      expect(listed[1]).toMatchObject({ attempts: 2, lastError: 'HTTP 503' });
    });

    it('given a held claim, a second claim of the delivery is refused until it is released', async () => {
      const { store } = await subject();
      const lease = await store.claim('msg_a', 60_000);
      expect(lease).toBeDefined();
      expect(await store.claim('msg_a', 60_000)).toBeUndefined();
      expect(await store.claim('msg_b', 60_000)).toBeDefined();
      await lease!.release();
      expect(await store.claim('msg_a', 60_000)).toBeDefined();
    });

    it('keeps runtime webhooks by id (a taken id is refused); deleting one removes its deliveries', async () => {
      const { store } = await subject();
      expect(await store.addWebhook(webhook('hook'))).toBe(true);
      expect(await store.addWebhook(webhook('hook'))).toBe(false);
      await store.add(delivery('msg_1'));
      expect((await store.webhooks()).map((w) => w.id)).toEqual(['hook']);
      expect(await store.deleteWebhook('hook')).toBe(true);
      expect(await store.deleteWebhook('hook')).toBe(false);
      expect(await store.webhooks()).toEqual([]);
      expect(await store.get('msg_1')).toBeUndefined();
      expect(await store.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    });

    it('given a store opened again on the medium, deliveries, their state and webhooks are still there', async (ctx) => {
      const { store, reopen } = await subject();
      if (!reopen) return ctx.skip();
      await store.addWebhook(webhook('hook'));
      await store.add(delivery('msg_1'));
      await store.put({ ...delivery('msg_1'), attempts: 1, nextAttemptAt: 7_000, lastError: 'timeout' });
      await store.add(delivery('msg_2'));
      await store.close();
      const again = await reopened(reopen);
      expect(await again.get('msg_1')).toMatchObject({ attempts: 1, nextAttemptAt: 7_000, lastError: 'timeout' });
      expect(await again.add(delivery('msg_2'))).toBe(false);
      expect((await again.webhooks()).map((w) => w.id)).toEqual(['hook']);
      expect((await again.due(8_000, 10)).map((d) => d.id).sort()).toEqual(['msg_1', 'msg_2']);
    });
  });
}

function delivery(id: string, over: Partial<Delivery> = {}): Delivery {
  return {
    id,
    webhookId: 'hook',
    eventId: `s:${id}`,
    type: 'turn.completed',
    status: 'pending',
    attempts: 0,
    createdAt: 1,
    nextAttemptAt: 1,
    body: JSON.stringify({ type: 'turn.completed', timestamp: '2026-01-01T00:00:00.000Z', data: { id } }),
    ...over,
  };
}

const webhook = (id: string): StoredWebhook => ({
  id,
  url: 'http://127.0.0.1:1/hook',
  events: ['turn.completed'],
  secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
  timeoutMs: 1000,
});
