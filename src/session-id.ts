import { z } from 'zod';
import { AppError } from './errors/index.ts';

/** A lone UTF-16 surrogate: such a string has no UTF-8 form, so no file name and no JSON round trip. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s: string) => !LONE_SURROGATE.test(s);

/** Separates a session key's owner from its id; never part of an id or a principal name. */
const MARK = '\u0000';

const MAX_ID_LENGTH = 128; // UTF-16 code units

/** `nameSchema`'s rule as a plain predicate. */
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

/** The one rule for session ids wherever one enters (REST, WebSocket, /mcp, A2A contextId and task ids). */
export const sessionIdSchema = nameSchema(MAX_ID_LENGTH);

/** A turn id a caller names (REST's `turnId`, AG-UI's `runId`): retrying a message with it never runs it twice. */
export const turnIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'a turn id is 1–128 letters, digits, ".", "_", ":" or "-"');

/** Who creates a session and how many they may hold: faces fill it in (auth/ownership.ts), the agent enforces it (agent/session/quota.ts). */
export interface SessionQuota {
  /** A principal's name, or `ip:<address>` for anonymous callers. */
  holder: string;
  limit: number;
}

/** Longest principal name that owns sessions (`jwt:` and a subject of up to 128 characters). */
export const MAX_OWNER_LENGTH = 132;

const ownerSchema = nameSchema(MAX_OWNER_LENGTH);

/** The inverse of `sessionKey` (owner absent for an unowned key); reading needs no brand. */
export function splitSessionKey(key: string): { owner?: string; id: string } {
  if (!key.startsWith(MARK)) return { id: key };
  const end = key.indexOf(MARK, 1);
  return end < 0 ? { id: key } : { owner: key.slice(1, end), id: key.slice(end + 1) };
}

/** `sessionKeySchema`'s rule without zod (every store call checks it). */
const validKey = (key: string): boolean => {
  const { owner, id } = splitSessionKey(key);
  return isName(id, MAX_ID_LENGTH) && (owner === undefined || isName(owner, MAX_OWNER_LENGTH));
};

/** A session id, or `NUL owner NUL id`; besides `sessionKey`, the one way to a {@link SessionKey} (keys read back from a store). */
export const sessionKeySchema = z
  .string()
  .refine(validKey, 'must be a session id or an owned session key')
  .brand<'SessionKey'>();

/** A session's identity `(owner, id)` as one string; branded, so no caller forges another principal's key by concatenation. */
export type SessionKey = z.output<typeof sessionKeySchema>;

export const isSessionKey = (key: string): key is SessionKey => validKey(key);

/**
 * The key of session `id` in `owner`'s namespace; INVALID_REQUEST (`details.field`) for an invalid id or owner.
 * Without an owner the key is the id itself (keys stored before principals existed stay valid).
 * Injective: neither part holds NUL, and `splitSessionKey` inverts it.
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

/** The prefix of every key in `owner`'s namespace, and of no other key. */
export const namespacePrefix = (owner: string): string => `${MARK}${owner}${MARK}`;

/**
 * Code point order of two keys (the order of their UTF-8 bytes, as Redis's ZRANGEBYLEX): the order stores list
 * sessions in (src/store/session-range.ts). JavaScript's `<` differs between a character above U+FFFF and one in
 * U+E000–U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Code units in code point order: surrogates (D800–DFFF) move above E000–FFFF. */
const codePointRank = (unit: number): number => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);

/** The session id a caller knows a key by (what messages and error details name). */
export const sessionIdOf = (key: string): string => splitSessionKey(key).id;

/** `data` with `sessionId` as the caller knows it (the id, not the key). */
export function asNamed<D extends { sessionId?: string }>(data: D): D {
  const key = data.sessionId;
  if (key === undefined || !key.startsWith(MARK)) return data;
  return { ...data, sessionId: sessionIdOf(key) };
}

/**
 * How ids agentd makes for sessions a caller did not name begin (A2A without `contextId`, /mcp without
 * `sessionId`). An unnamed session is not counted toward `sessionsPerPrincipal` and expires when idle
 * (agent/unnamed-expiry.ts); callers cannot pick such an id (agent/session/quota.ts).
 */
export const UNNAMED_PREFIX = 'unnamed-';

export const unnamedSessionId = (id: string): string => `${UNNAMED_PREFIX}${id}`;

export const isUnnamed = (key: string): boolean => sessionIdOf(key).startsWith(UNNAMED_PREFIX);
