import { describe, expect, it } from 'vitest';
import { sharedSecret, type SecretStore } from '../../src/store/secret-store.ts';
import { until } from '../support/wait.ts';

/**
 * The SecretStore port's contract (src/store/secret-store.ts); it runs on every record store engine, each with its
 * own factory (which opens the record store and closes it after the file). `reopen` (durable engines) gives a second
 * store over the same medium, as a restart or another instance would.
 */
export function secretStoreContract(
  name: string,
  make: () => Promise<{ store: SecretStore; reopen?: () => Promise<SecretStore> }>,
): void {
  describe(`SecretStore contract: ${name}`, () => {
    const subject = make;

    it('answers undefined for a key never set', async () => {
      const { store } = await subject();
      expect(await store.get('nothing-here')).toBeUndefined();
    });

    it('answers what the last set stored; set replaces the whole value; delete forgets it', async () => {
      const { store } = await subject();
      await store.set('oauth-a', '{"tokens":{"access_token":"one"}}');
      await store.set('oauth-a', '{"x":1}');
      expect(await store.get('oauth-a')).toBe('{"x":1}');
      await store.delete('oauth-a');
      expect(await store.get('oauth-a')).toBeUndefined();
      await store.delete('oauth-a'); // deleting what is gone is fine
    });

    it('keeps keys apart and values byte for byte (unicode, newlines, large)', async () => {
      const { store } = await subject();
      const big = 'é\n✓'.repeat(50_000);
      await store.set('a', big);
      await store.set('b', '');
      expect(await store.get('a')).toBe(big);
      expect(await store.get('b')).toBe('');
    });

    it('refuses keys that could name another place', async () => {
      const { store } = await subject();
      for (const key of ['', '../x', 'a/b', 'a.b', 'x'.repeat(129), 'sp ace']) {
        await expect(store.set(key, 'v'), key).rejects.toThrow(/invalid key/);
        await expect(store.get(key), key).rejects.toThrow(/invalid key/);
      }
    });

    it('given a held lease, a second claim is refused until it is released', async () => {
      const { store } = await subject();
      const lease = await store.claim('oauth-a-refresh', 60_000);
      expect(lease).toBeDefined();
      expect(await store.claim('oauth-a-refresh', 60_000)).toBeUndefined();
      expect(await store.claim('oauth-b-refresh', 60_000)).toBeDefined(); // another key is another lease
      await store.set('oauth-a-refresh', 'value'); // and a value of the same name is not the lease
      expect(await store.claim('oauth-a-refresh', 60_000)).toBeUndefined();
      await lease!.release();
      expect(await store.claim('oauth-a-refresh', 60_000)).toBeDefined();
      await expect(store.claim('../x', 1000)).rejects.toThrow(/invalid key/);
    });

    it("given a lease past its ttl, a claim takes it over, and the old holder's release leaves the new lease alone", async () => {
      const { store } = await subject();
      const old = await store.claim('lapsing', 30);
      expect(old).toBeDefined();
      let taken: Awaited<ReturnType<SecretStore['claim']>>;
      await until(
        async () => (taken = await store.claim('lapsing', 60_000)) !== undefined,
        'the lapsed lease is taken over',
      );
      await old!.release();
      expect(await store.claim('lapsing', 60_000)).toBeUndefined();
      await taken!.release();
    });

    /** Two more open stores over the subject's medium (none for an engine without one). */
    const othersOf = async (s: Awaited<ReturnType<typeof subject>>) => {
      return s.reopen ? await Promise.all([s.reopen(), s.reopen()]) : [];
    };

    it('of concurrent claims exactly one wins, also across stores over the same medium', async () => {
      const s = await subject();
      const others = await othersOf(s);
      const claimants = [s.store, s.store, ...others, ...others];
      // Many rounds: a lease seen while its holder is still writing it must not look free.
      for (let round = 0; round < 30; round++) {
        const leases = await Promise.all(claimants.map((store) => store.claim(`contended-${round}`, 60_000)));
        expect(leases.filter(Boolean)).toHaveLength(1);
      }
    });

    it('a shared secret is made once: concurrent callers, also across stores over the same medium, get the same 32 bytes', async () => {
      const s = await subject();
      const others = await othersOf(s);
      const keys = await Promise.all([s.store, s.store, ...others].map((store) => sharedSecret(store, 'face-key')));
      expect(keys[0]).toHaveLength(32);
      expect(new Set(keys.map((k) => k.toString('hex'))).size).toBe(1);
      expect((await sharedSecret(s.store, 'face-key')).equals(keys[0]!)).toBe(true);
      expect((await sharedSecret(s.store, 'other-key')).equals(keys[0]!)).toBe(false);
    });

    it('a store reopened over the same medium reads what was stored (restart, another instance)', async (ctx) => {
      const s = await subject();
      if (!s.reopen) return ctx.skip();
      await s.store.set('oauth-shared', 'v1');
      const again = await s.reopen();
      expect(await again.get('oauth-shared')).toBe('v1');
      await again.set('oauth-shared', 'v2');
      expect(await s.store.get('oauth-shared')).toBe('v2');
    });
  });
}
