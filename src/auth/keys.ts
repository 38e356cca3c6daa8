import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthConfig } from '../config/index.ts';
import type { Principal } from './principal.ts';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** A configured key; `owner`: whose sessions it uses (see Principal.owner), its name unless a shorthand says none. */
export type KeyEntry = NonNullable<AuthConfig['keys']>[number] & { owner: string | undefined };

export const keyPrincipal = (e: KeyEntry): Principal => ({
  name: e.name,
  scopes: new Set(e.scopes),
  via: 'key',
  owner: e.owner,
});

/**
 * The configured keys: a credential is compared with every key in constant time on SHA-256 digests (no early
 * exit, no length leak); the answer is that key's principal (one object per key) or `undefined`.
 */
export function createKeyTable(entries: readonly KeyEntry[]): (credential: string) => Principal | undefined {
  const table = entries.map((e) => ({ digest: digest(e.key), principal: keyPrincipal(e) }));
  return (credential) => {
    const given = digest(credential);
    let found: Principal | undefined = undefined;
    for (const entry of table) if (timingSafeEqual(given, entry.digest) && found === undefined) found = entry.principal;
    return found;
  };
}
