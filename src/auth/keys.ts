import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal, ScopeName } from './principal.ts';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export interface KeyEntry {
  name: string;
  key: string;
  scopes: readonly ScopeName[];
  /** Whose sessions the key uses (see Principal.owner): its name, unless a shorthand says none. */
  owner: string | undefined;
}

/**
 * The configured keys. Contracts: a credential is compared with every key, always all of them, in
 * constant time on SHA-256 digests (no early exit, no length leak); the answer is that key's principal
 * (one object per key, made once) or `undefined`. Keys are never kept in clear beyond this closure.
 */
export function createKeyTable(entries: readonly KeyEntry[]): (credential: string) => Principal | undefined {
  const table = entries.map((e) => ({
    digest: digest(e.key),
    principal: { name: e.name, scopes: new Set(e.scopes), via: 'key', owner: e.owner } satisfies Principal,
  }));
  return (credential) => {
    const given = digest(credential);
    let found: Principal | undefined = undefined;
    for (const entry of table) if (timingSafeEqual(given, entry.digest) && found === undefined) found = entry.principal;
    return found;
  };
}
