import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors/index.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** What a request may do: `public` (static pages), `client` (messages, sessions, reads) or `admin` (start processes, open sockets, run tools). */
export type Scope = 'public' | 'client' | 'admin';

/** The key of an `Authorization: Bearer <key>` header; anything else carries no key. */
export function bearerKey(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer (\S+)$/.exec(header);
  return match?.[1];
}

/**
 * Key checks for the two scopes.
 *
 * Contracts:
 * - `public` scope needs no key.
 * - `client` scope needs `apiKey` or `adminKey` when `apiKey` is set; nothing otherwise.
 * - `admin` scope needs `adminKey` when it is set; otherwise it is checked like `client`.
 * - Keys are compared in constant time (on their SHA-256 digests) and never echoed or logged.
 * - A refusal is UNAUTHORIZED; the front answers it 401 with `WWW-Authenticate: Bearer`.
 */
export function createAuth(keys: { apiKey?: string | undefined; adminKey?: string | undefined }) {
  const api = keys.apiKey === undefined ? undefined : digest(keys.apiKey);
  const admin = keys.adminKey === undefined ? undefined : digest(keys.adminKey);
  const matches = (key: string | undefined, expected: Buffer | undefined) => key !== undefined && expected !== undefined && timingSafeEqual(digest(key), expected);

  return (key: string | undefined, scope: Scope = 'client'): void => {
    if (scope === 'public') return;
    if (scope === 'admin' && admin) {
      if (matches(key, admin)) return;
      throw new AppError('UNAUTHORIZED', 'This operation needs the admin key', { scope, suggestion: 'send Authorization: Bearer <server.auth.adminKey>' });
    }
    if (!api || matches(key, api) || matches(key, admin)) return;
    throw new AppError('UNAUTHORIZED', 'Missing or invalid API key', { scope: 'client', suggestion: 'send Authorization: Bearer <server.auth.apiKey>' });
  };
}
export type Auth = ReturnType<typeof createAuth>;
