/**
 * The secret-store record of one OAuth tool server: registration, tokens, pending sign-in, sign-ins in a row.
 * Its key hashes the server's name and URL (and the principal's name, `oauth.per: principal`): a server renamed or
 * moved starts anew; a record stored for another URL reads as `undefined`. A sign-in's `state` is
 * `<random>[~<principal, hex>].<serverId>` (random is base64url), so any instance finds the pending sign-in.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OAuthClientInformationMixed, OAuthDiscoveryState, OAuthTokens } from '@modelcontextprotocol/client';
import type { SecretStore } from '../../store/secret-store.ts';

/** How long a sign-in URL stays valid. */
export const PENDING_TTL_MS = 10 * 60_000;

export interface Pending {
  state: string;
  codeVerifier: string;
  url: string;
  createdAt: number;
  /** What discovery found when the sign-in began: the code is exchanged with that authorization server (SEP-2352). */
  discovery?: OAuthDiscoveryState | undefined;
  /**
   * A principal's sign-in: the digest (`digestOf`) of the one-time value handed to the principal that began it
   * (`bind`, client.ts); the callback completes it only with that value (no login CSRF).
   */
  binding?: string | undefined;
}

export interface OAuthRecord {
  serverUrl: string;
  client?: OAuthClientInformationMixed;
  /** `scope` is what was granted: the token response's, else what was asked for (RFC 6749 §5.1). */
  tokens?: OAuthTokens & { obtainedAt: number };
  pending?: Pending;
  /** Sign-ins completed in a row since a request last succeeded with the server (`oauth.maxSignIns`). */
  signIns?: number;
}

export const recordKey = (serverId: string, url: string, principal?: string) =>
  `oauth-${createHash('sha256')
    .update(`${serverId}\n${url}${principal === undefined ? '' : `\n\u0000${principal}`}`)
    .digest('hex')
    .slice(0, 40)}`;

/** A sign-in's `state`: `random` (base64url) tagged with its principal, if any, and its server. */
export const stateOf = (random: string, serverId: string, principal?: string) =>
  `${random}${principal === undefined ? '' : `~${Buffer.from(principal).toString('hex')}`}.${serverId}`;

export const serverOfState = (state: string): string | undefined => {
  const dot = state.indexOf('.');
  return dot > 0 ? state.slice(dot + 1) : undefined;
};

/** The principal a sign-in's `state` names (`undefined`: the server's own sign-in). */
export const principalOfState = (state: string): string | undefined => {
  const head = state.slice(0, Math.max(0, state.indexOf('.')));
  const tilde = head.indexOf('~');
  return tilde < 0 ? undefined : Buffer.from(head.slice(tilde + 1), 'hex').toString();
};

/** The SHA-256 (hex) of a sign-in's binding value: only the digest is stored. */
export const digestOf = (value: string) => createHash('sha256').update(value).digest('hex');

/** Constant-time equality of two texts. */
export const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export const scopeOfUrl = (url: string): string | undefined => {
  try {
    return new URL(url).searchParams.get('scope') ?? undefined;
  } catch {
    return undefined;
  }
};

/** Reads and writes one server's record. */
export function recordFile(store: SecretStore, key: string, serverUrl: string) {
  return {
    async read(): Promise<OAuthRecord | undefined> {
      const text = await store.get(key);
      const parsed = text === undefined ? undefined : (JSON.parse(text) as OAuthRecord);
      return parsed?.serverUrl === serverUrl ? parsed : undefined;
    },
    write: (record: OAuthRecord) => store.set(key, JSON.stringify(record)),
    remove: () => store.delete(key),
  };
}
