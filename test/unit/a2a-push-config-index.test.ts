/**
 * A task without a push config costs no read of the secret store (config-index.ts), while configs stay visible after
 * a change and a restart; on a shared medium (redis) too while the instances hear each other's changes (here through
 * an in-memory stand-in of changes-redis.ts), and each task's record is read while they do not.
 */
import { describe, expect, it } from 'vitest';
import type { IndexChanges } from '../../src/a2a-face/push/config-index.ts';
import { createPushConfigStore } from '../../src/a2a-face/push/config-store.ts';
import { createMemorySecretStore, type SecretStore } from '../../src/store/secret-store.ts';

const policy = { allowPrivateNetworks: true, allowedHosts: undefined };
const config = { id: 'c1', url: 'http://127.0.0.1:9/hook', version: '1.0' as const };

function counted(inner: SecretStore): SecretStore & { reads: string[] } {
  const reads: string[] = [];
  return { ...inner, reads, get: (key) => (reads.push(key), inner.get(key)) };
}

/** Changes heard by every instance of one medium at once (Redis pub/sub, in memory). */
function sharedChanges() {
  const listeners: (() => void)[] = [];
  let live = true;
  const tell = () => listeners.forEach((l) => l());
  const changes: IndexChanges = {
    live: () => live,
    publish: () => Promise.resolve(tell()),
    listen: (l) => void listeners.push(l),
  };
  return { changes, heard: (on: boolean) => ((live = on), tell()) };
}

describe('A2A push config index', () => {
  it('answers no config without reading the task record, and sees one set before and after a restart', async () => {
    const secrets = counted(createMemorySecretStore());
    const store = createPushConfigStore(secrets, policy);
    expect(await store.list('s1', 't1')).toEqual([]);
    expect(await store.list('s1', 't2')).toEqual([]);
    expect(secrets.reads).toEqual(['a2a-push-tasks']); // the index, once

    await store.set('s1', 't1', config);
    expect(await store.list('s1', 't1')).toEqual([config]);
    const restarted = createPushConfigStore(secrets, policy);
    expect(await restarted.list('s1', 't1')).toEqual([config]);

    expect(await restarted.delete('s1', 't1', 'c1')).toBe(true);
    secrets.reads.length = 0;
    expect(await restarted.list('s1', 't1')).toEqual([]);
    expect(secrets.reads).toEqual([]);
  });

  it("on a shared medium reads no task record while changes are heard, and sees another instance's changes", async () => {
    const secrets = counted(createMemorySecretStore());
    const medium = sharedChanges();
    const mine = createPushConfigStore(secrets, policy, medium.changes);
    const theirs = createPushConfigStore(secrets, policy, medium.changes);
    expect(await mine.list('s1', 't1')).toEqual([]);
    expect(await mine.list('s1', 't2')).toEqual([]);
    expect(secrets.reads).toEqual(['a2a-push-tasks']); // the index, once

    await theirs.set('s1', 't1', config);
    expect(await mine.list('s1', 't1')).toEqual([config]);
    expect(await theirs.delete('s1', 't1', 'c1')).toBe(true);
    expect(await mine.list('s1', 't1')).toEqual([]);

    medium.heard(false); // Redis away: another instance's change would not be heard
    secrets.reads.length = 0;
    expect(await mine.list('s1', 't3')).toEqual([]);
    expect(secrets.reads).toEqual([expect.stringMatching(/^a2a-push-[0-9a-f]+$/)]);
    medium.heard(true);
    secrets.reads.length = 0;
    expect(await mine.list('s1', 't3')).toEqual([]);
    expect(secrets.reads).toEqual(['a2a-push-tasks']); // read again once heard
  });
});
