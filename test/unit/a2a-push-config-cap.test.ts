/**
 * A principal holds at most `maxPerPrincipal` A2A push configs on tasks not finished (src/a2a-face/push/config-store.ts):
 * one more is RATE_LIMIT_EXCEEDED; replacing one it holds, a config on a finished task and another principal's are
 * not refused; a task that finished, or a deleted config, gives its room back; the configs themselves stay listed.
 */
import { describe, expect, it } from 'vitest';
import { createPushConfigStore } from '../../src/a2a-face/push/config-store.ts';
import { AppError } from '../../src/errors/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { sessionKey } from '../../src/session-id.ts';
import { createMemoryRecordStore } from '../../src/store/records/index.ts';

const log = createLogger('silent');
const policy = { allowPrivateNetworks: true, allowedHosts: undefined };
const config = (id: string) => ({ id, url: 'http://127.0.0.1:9/hook', version: '1.0' as const });
const alice = sessionKey('alice', 'ctx');
const bob = sessionKey('bob', 'ctx');

async function configs(now = () => Date.now()) {
  const records = createMemoryRecordStore({ log, clock: { now } });
  await records.open();
  return createPushConfigStore(records, policy, { log, now, maxPerPrincipal: 2 });
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => (err instanceof AppError ? { code: err.code, details: err.details } : err),
  );

describe('push configs per principal', () => {
  it('refuses one past the cap with RATE_LIMIT_EXCEEDED; replacing, finished tasks and other principals pass', async () => {
    const store = await configs();
    await store.set(alice, 't1', config('a'));
    await store.set(alice, 't2', config('b'));
    expect(await refusal(store.set(alice, 't3', config('c')))).toEqual({
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 2, remaining: 0, reason: 'push_configs_per_principal' },
    });
    expect(await store.list(alice, 't3')).toEqual([]);
    await store.set(alice, 't1', { ...config('a'), url: 'http://127.0.0.1:9/other' }); // replaces one it holds
    await store.set(alice, 'done', config('late'), { finished: true }); // a finished task is told nothing more
    await store.set(bob, 't1', config('a'));
    expect((await store.list(alice, 't1')).map((c) => c.url)).toEqual(['http://127.0.0.1:9/other']);
  });

  it('gives the room back when a task finishes or a config is deleted; configs stay listed', async () => {
    const store = await configs();
    await store.set(alice, 't1', config('a'));
    await store.set(alice, 't2', config('b'));
    await store.finished(alice, 't1');
    await store.set(alice, 't3', config('c'));
    expect((await store.list(alice, 't1')).map((c) => c.id)).toEqual(['a']);
    expect(await refusal(store.set(alice, 't4', config('d')))).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(await store.delete(alice, 't2', 'b')).toBe(true);
    await store.set(alice, 't4', config('d'));
  });

  it('counts a config a week at most (a task that never finishes does not hold its room for ever)', async () => {
    let now = 1_000_000;
    const store = await configs(() => now);
    await store.set(alice, 't1', config('a'));
    await store.set(alice, 't2', config('b'));
    now += 7 * 24 * 3_600_000;
    await store.set(alice, 't3', config('c'));
  });
});
