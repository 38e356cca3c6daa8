import { afterEach, describe, expect, it } from 'vitest';
import type { SecretStore } from '../../src/store/secret-store.ts';

/**
 * The SecretStore port's contract (src/store/secret-store.ts); every engine runs it with its own factory.
 * `reopen` (durable engines) opens a second store over the same medium, as a restart or another instance would.
 */
export function secretStoreContract(name: string, make: () => Promise<{ store: SecretStore; reopen?: () => Promise<SecretStore> }>): void {
  describe(`SecretStore contract: ${name}`, () => {
    const opened: SecretStore[] = [];
    const subject = async () => {
      const s = await make();
      await s.store.open();
      opened.push(s.store);
      return s;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

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

    it('a store reopened over the same medium reads what was stored (restart, another instance)', async (ctx) => {
      const s = await subject();
      if (!s.reopen) return ctx.skip();
      await s.store.set('oauth-shared', 'v1');
      const again = await s.reopen();
      await again.open();
      opened.push(again);
      expect(await again.get('oauth-shared')).toBe('v1');
      await again.set('oauth-shared', 'v2');
      expect(await s.store.get('oauth-shared')).toBe('v2');
    });
  });
}
