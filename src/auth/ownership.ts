/**
 * Sessions belong to principals: every face turns a caller's session id into its key through one `SessionAccess`.
 * - A principal's ids name sessions of its own namespace (`Principal.owner`): two principals' same id is two sessions.
 * - Only an `admin` reaches another namespace, by naming its owner (`''`: the unnamed one); anyone else naming
 *   another owner is refused FORBIDDEN before anything is read. Listings show an admin everything, others their own.
 * - `strict` (any key or JWT configured): a session with no stored event answers 404, so foreign and unknown ids look alike.
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

export { sessionIdOf } from '../session-id.ts';
import { hasScope, type Principal } from './principal.ts';

export interface SessionAccess {
  /** The cap on the caller's sessions: none for an admin principal; anonymous callers are counted by IP. */
  readonly quota: SessionQuota | undefined;
  /** The key of the caller's session `id`, or (admin only) of `owner`'s; INVALID_REQUEST for a bad id or owner. */
  key(id: string, owner?: string): SessionKey;
  /** Whether a listing shows the session stored under `key` to the caller (an invalid key: to nobody). */
  sees(key: string): key is SessionKey;
  /** The same as a range of keys in the store's order (src/store/session-range.ts): what a paged listing asks for. */
  readonly listed: KeyRange;
  /** The same as an owner (`splitSessionKey`'s; `''`: keys without one), or `undefined` for every session: what a listing by recency asks for. */
  readonly listedOwner: string | undefined;
  /** Whether an unknown session answers 404. */
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

/** The keys of one namespace as a range (owned keys are `NUL owner NUL id`; unowned ones never start with NUL). */
export function namespaceRange(owner: string): KeyRange {
  if (owner === '') return { from: '\u0001' };
  const start = namespacePrefix(owner);
  return { from: start, below: `${start.slice(0, -1)}\u0001` };
}

/**
 * The `?owner=` rule of every route that names whose data it reaches (sessions, memory; the usage report's
 * `?principal=`, named by `field`): only an admin may name an owner other than its own (`own`); anyone else is refused
 * FORBIDDEN before anything is read.
 */
export function checkOwnerNamed(
  principal: Principal,
  owner: string | undefined,
  own: string,
  what: string,
  field = 'owner',
): void {
  if (owner !== undefined && owner !== own && !hasScope(principal, 'admin'))
    throw new AppError('FORBIDDEN', `Only an admin principal may name the owner of ${what}`, {
      scope: 'admin',
      principal: principal.name,
      field,
    });
}

/** The sessions `principal` (calling from `ip`) reaches. */
export function sessionAccess(principal: Principal, ip: string, options: OwnershipOptions): SessionAccess {
  const admin = hasScope(principal, 'admin');
  const own = principal.owner ?? '';
  const holder = principal.via === 'anonymous' ? `ip:${ip}` : principal.name;
  return {
    strict: options.strict,
    // Admin principals are trusted with any number; anonymous callers are capped even when they hold every scope (no auth).
    quota: admin && principal.via !== 'anonymous' ? undefined : { holder, limit: options.sessionsPerPrincipal },
    key(id, owner) {
      checkOwnerNamed(principal, owner, own, 'a session');
      const namespace = owner ?? own;
      return sessionKey(namespace === '' ? undefined : namespace, id);
    },
    sees: (key): key is SessionKey => isSessionKey(key) && (admin || (splitSessionKey(key).owner ?? '') === own),
    listed: admin ? {} : namespaceRange(own),
    listedOwner: admin ? undefined : own,
  };
}

/** The sessions of the local single user (the stdio MCP face): the unnamed namespace, uncapped, lenient. */
export const LOCAL_SESSIONS: SessionAccess = {
  strict: false,
  quota: undefined,
  key: (id) => sessionKey(undefined, id),
  sees: isSessionKey,
  listed: {},
  listedOwner: undefined,
};

/** A session's 404: the same answer for a session that does not exist and one of another principal. */
export const sessionNotFound = (id: string): AppError =>
  new AppError('SESSION_NOT_FOUND', `No session "${id}"`, { sessionId: id });
