import { z } from 'zod';
import { AppError } from './errors/index.ts';

/** A lone UTF-16 surrogate: such a string has no UTF-8 form, so no file name and no JSON round trip. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s: string) => !LONE_SURROGATE.test(s);

/** Separates a session key's owner from its id; never part of an id or a principal name. */
const MARK = '\u0000';

/** Longest session id (UTF-16 code units). */
const MAX_ID_LENGTH = 128;

/** 1–`max` UTF-16 code units of well-formed Unicode without NUL: `nameSchema`'s rule as a plain predicate. */
const isName = (name: string, max: number): boolean =>
  name.length >= 1 && name.length <= max && wellFormed(name) && !name.includes(MARK);

/** 1–`max` UTF-16 code units of well-formed Unicode without NUL. */
const nameSchema = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine(wellFormed, 'must be well-formed Unicode')
    .refine((name) => !name.includes(MARK), 'must not contain NUL');

/**
 * The one rule for session ids, wherever one enters (REST, WebSocket frames, /mcp, A2A's contextId
 * and task ids): 1–128 UTF-16 code units of well-formed Unicode without NUL (NUL marks an owned
 * session's key, see `sessionKey`).
 */
export const sessionIdSchema = nameSchema(MAX_ID_LENGTH);

/**
 * Who creates a session and how many sessions they may hold (`server.limits.sessionsPerPrincipal`):
 * faces fill it in (src/auth/ownership.ts), the agent enforces it (src/agent/session/quota.ts).
 */
export interface SessionQuota {
  /** A principal's name, or `ip:<address>` for anonymous callers. */
  holder: string;
  limit: number;
}

/** Longest principal name that owns sessions (`jwt:` and a subject of up to 128 characters). */
export const MAX_OWNER_LENGTH = 132;

/** A principal name that owns sessions. */
const ownerSchema = nameSchema(MAX_OWNER_LENGTH);

/** The owner (absent for the unnamed namespace) and the id of a session key: the inverse of `sessionKey`. Reading needs no brand. */
export function splitSessionKey(key: string): { owner?: string; id: string } {
  if (!key.startsWith(MARK)) return { id: key };
  const end = key.indexOf(MARK, 1);
  return end < 0 ? { id: key } : { owner: key.slice(1, end), id: key.slice(end + 1) };
}

/** The rule of `sessionKeySchema` as a plain predicate: every store call checks it, so it skips zod's parse. */
const validKey = (key: string): boolean => {
  const { owner, id } = splitSessionKey(key);
  return isName(id, MAX_ID_LENGTH) && (owner === undefined || isName(owner, MAX_OWNER_LENGTH));
};

/**
 * The rule for the key a session is stored and addressed under inside agentd (stores, bus, cluster):
 * a valid session id, or `NUL owner NUL id` with a valid owner and id. Parsing with it is the one
 * way besides `sessionKey` to get a {@link SessionKey}: for keys read back from a store listing.
 */
export const sessionKeySchema = z
  .string()
  .refine(validKey, 'must be a session id or an owned session key')
  .brand<'SessionKey'>();

/**
 * A session's identity, `(owner, id)`, as the one string it is stored and addressed under. Branded:
 * only `sessionKey` makes one from the pair, and `sessionKeySchema` from a stored key, so no caller
 * forges another principal's key by concatenation (a plain string does not type-check as one).
 */
export type SessionKey = z.output<typeof sessionKeySchema>;

/** Whether `key` (read back from a store) is a session key: the check of `sessionKeySchema`. */
export const isSessionKey = (key: string): key is SessionKey => validKey(key);

/**
 * The key of session `id` in the namespace of `owner`. Contracts: `id` must pass `sessionIdSchema`
 * and `owner` be a principal name without NUL, else INVALID_REQUEST (`details.field`); without an
 * owner (a single user, the shorthand keys) the key is the id itself, so sessions stored before
 * principals existed keep their keys; an owned key is `NUL owner NUL id`. Neither part holds NUL,
 * so the mapping is injective and `splitSessionKey` inverts it.
 */
export function sessionKey(owner: string | undefined, id: string): SessionKey {
  refuse('sessionId', sessionIdSchema.safeParse(id));
  if (owner !== undefined) refuse('owner', ownerSchema.safeParse(owner));
  return (owner === undefined ? id : `${MARK}${owner}${MARK}${id}`) as SessionKey;
}

function refuse(field: string, parsed: z.ZodSafeParseResult<string>): void {
  if (!parsed.success)
    throw new AppError('INVALID_REQUEST', `${field} ${parsed.error.issues[0]?.message ?? 'is invalid'}`, { field });
}

/** Where the keys of `owner`'s namespace start (`NUL owner NUL`): every key of it, and no other, begins so. */
export const namespacePrefix = (owner: string): string => `${MARK}${owner}${MARK}`;

/** The session id a caller knows a key by (what messages and error details name). */
export const sessionIdOf = (key: string): string => splitSessionKey(key).id;

/** A frame's data or a record as its caller knows it: `sessionId` is the session's id, not its key (unchanged when they are the same). */
export function asNamed<D extends { sessionId?: string }>(data: D): D {
  const key = data.sessionId;
  if (key === undefined || !key.startsWith(MARK)) return data;
  return { ...data, sessionId: sessionIdOf(key) };
}

/**
 * Where the ids agentd makes for sessions a caller did not name begin (an A2A message without
 * `contextId`, a `/mcp` call without `sessionId`). Such a session is *unnamed*: it is not counted
 * toward `sessionsPerPrincipal` and is deleted once idle for `server.limits.unnamedSessions.ttlMs`
 * (src/agent/unnamed-expiry.ts). The mark is the id itself, so it costs no read and survives a
 * restart on every store. A caller cannot create a session with such an id (session/quota.ts `refuseUnnamed`).
 */
export const UNNAMED_PREFIX = 'unnamed-';

/** The id of a new unnamed session, from a fresh unique `id`. */
export const unnamedSessionId = (id: string): string => `${UNNAMED_PREFIX}${id}`;

/** Whether the session stored under `key` is unnamed (see `UNNAMED_PREFIX`). */
export const isUnnamed = (key: string): boolean => sessionIdOf(key).startsWith(UNNAMED_PREFIX);
