/**
 * A task without a push config costs no read of the secret store on a medium of one instance (config-index.ts),
 * while configs stay visible after a change and a restart; on a shared medium (redis) each task's record is read.
 */
import { describe, expect, it } from 'vitest';
import { createPushConfigStore } from '../../src/a2a-push/config-store.ts';
import { createMemorySecretStore, type SecretStore } from '../../src/store/secret-store.ts';

const policy = { allowPrivateNetworks: true, allowedHosts: undefined };
const config = { id: 'c1', url: 'http://127.0.0.1:9/hook', version: '1.0' as const };

function counted(inner: SecretStore): SecretStore & { reads: string[] } {
  const reads: string[] = [];
  return { ...inner, reads, get: (key) => (reads.push(key), inner.get(key)) };
}

describe('A2A push config index', () => {
  it('answers no config without reading the task record, and sees one set before and after a restart', async () => {
    const secrets = counted(createMemorySecretStore());
    const store = createPushConfigStore(secrets, policy, false);
    expect(await store.list('s1', 't1')).toEqual([]);
    expect(await store.list('s1', 't2')).toEqual([]);
    expect(secrets.reads).toEqual(['a2a-push-tasks']); // the index, once

    await store.set('s1', 't1', config);
    expect(await store.list('s1', 't1')).toEqual([config]);
    const restarted = createPushConfigStore(secrets, policy, false);
    expect(await restarted.list('s1', 't1')).toEqual([config]);

    expect(await restarted.delete('s1', 't1', 'c1')).toBe(true);
    secrets.reads.length = 0;
    expect(await restarted.list('s1', 't1')).toEqual([]);
    expect(secrets.reads).toEqual([]);
  });

  it('on a shared medium reads the task record each time (another instance may have set a config)', async () => {
    const secrets = counted(createMemorySecretStore());
    const mine = createPushConfigStore(secrets, policy, true);
    const theirs = createPushConfigStore(secrets, policy, true);
    expect(await mine.list('s1', 't1')).toEqual([]);
    await theirs.set('s1', 't1', config);
    expect(await mine.list('s1', 't1')).toEqual([config]);
  });
});
