/**
 * Sessions belong to principals. Every face turns the session id a caller names into the key the
 * session lives under (src/session-id.ts) through one `SessionAccess`, and turns keys back into ids
 * on the way out.
 *
 * Contracts:
 * - A principal's ids name sessions of its own namespace (`Principal.owner`): the same id named by two
 *   principals is two sessions, so each has its own `default` and no id names another's session.
 * - Only an `admin` principal reaches another namespace, by naming its owner (`''` names the unnamed
 *   one); anyone else naming an owner other than its own is refused FORBIDDEN before anything is read.
 * - `sees` decides what listings show: an admin sees every session, anyone else its own namespace's;
 *   `listed` is that namespace as a range of keys (a namespace's keys sort together), so a listing
 *   reads a principal's sessions only, a page at a time.
 * - `strict` (any key or JWT configured): a session with no stored event is not found (404
 *   SESSION_NOT_FOUND) on the routes that read or change an existing session, so a foreign id and an
 *   unknown one answer alike. Without auth nothing changes for the single user.
 */
import { AppError } from '../errors/index.ts';
import {
  isSessionKey,
  namespacePrefix,
  sessionKey,
  splitSessionKey,
  type SessionKey,
  type SessionQuota,
} from '../session-id.ts';

export { sessionIdOf, type SessionQuota } from '../session-id.ts';
import { hasScope, type Principal } from './principal.ts';

export interface SessionAccess {
  /** The cap on the caller's sessions: none for an admin principal; anonymous callers are counted by IP. */
  readonly quota: SessionQuota | undefined;
  /** The key of the caller's session `id`, or (admin only) of `owner`'s; an id or owner that breaks the rule is INVALID_REQUEST (`sessionKey`). */
  key(id: string, owner?: string): SessionKey;
  /** Whether a listing shows the session stored under `key` to the caller: a key that breaks the rule of keys is shown to nobody. */
  sees(key: string): key is SessionKey;
  /** The same as a range of keys in the store's order (src/store/session-range.ts): what a paged listing asks for. */
  readonly listed: KeyRange;
  /** Whether an unknown session answers 404 (see the contracts). */
  readonly strict: boolean;
}

export interface OwnershipOptions {
  /** Any key or JWT configured (Principals.configured). */
  strict: boolean;
  /** `server.limits.sessionsPerPrincipal`. */
  sessionsPerPrincipal: number;
}

/** Keys between `from` (inclusive) and `below` (exclusive), in code point order; absent bounds: unbounded. */
export interface KeyRange {
  from?: string;
  below?: string;
}

/**
 * The keys of one namespace as a range: an owned key is `NUL owner NUL id` (src/session-id.ts), so
 * `owner`'s keys lie from `NUL owner NUL` up to `NUL owner U+0001`; a key of the unnamed namespace
 * ('') never starts with NUL, so those lie from U+0001 on.
 */
export function namespaceRange(owner: string): KeyRange {
  if (owner === '') return { from: '\u0001' };
  const start = namespacePrefix(owner);
  return { from: start, below: `${start.slice(0, -1)}\u0001` };
}

/** The sessions `principal` (calling from `ip`) reaches; see the contracts. */
export function sessionAccess(principal: Principal, ip: string, options: OwnershipOptions): SessionAccess {
  const admin = hasScope(principal, 'admin');
  const own = principal.owner ?? '';
  const holder = principal.via === 'anonymous' ? `ip:${ip}` : principal.name;
  return {
    strict: options.strict,
    // Admin principals are trusted with any number; anonymous callers are capped even when they hold every scope (no auth).
    quota: admin && principal.via !== 'anonymous' ? undefined : { holder, limit: options.sessionsPerPrincipal },
    key(id, owner) {
      if (owner !== undefined && owner !== own && !admin) {
        throw new AppError('FORBIDDEN', 'Only an admin principal may name the owner of a session', {
          scope: 'admin',
          principal: principal.name,
          field: 'owner',
        });
      }
      const namespace = owner ?? own;
      return sessionKey(namespace === '' ? undefined : namespace, id);
    },
    sees: (key): key is SessionKey => isSessionKey(key) && (admin || (splitSessionKey(key).owner ?? '') === own),
    listed: admin ? {} : namespaceRange(own),
  };
}

/** The sessions of the local single user (the stdio MCP face): the unnamed namespace, uncapped, lenient. */
export const LOCAL_SESSIONS: SessionAccess = {
  strict: false,
  quota: undefined,
  key: (id) => sessionKey(undefined, id),
  sees: isSessionKey,
  listed: {},
};

/** A session's 404: the same answer for a session that does not exist and one of another principal. */
export const sessionNotFound = (id: string): AppError =>
  new AppError('SESSION_NOT_FOUND', `No session "${id}"`, { sessionId: id });
