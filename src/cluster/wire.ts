/**
 * What instances send each other through the cluster's medium (Redis or Postgres). `readWire` returns a message that is JSON and matches its schema;
 * anything else is logged (where from, why, the first `WIRE_PREFIX_CHARS` characters) and dropped. Never throws.
 */
import { z } from 'zod';
import { ERROR_TABLE, type ErrorCode } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';

/** How much of an invalid message is logged. */
export const WIRE_PREFIX_CHARS = 120;

const errorCode = z.enum(Object.keys(ERROR_TABLE) as [ErrorCode, ...ErrorCode[]]);

const wireCommand = z.object({
  kind: z.literal('command'),
  id: z.string(),
  /** The instance whose inbox gets the reply. */
  from: z.string(),
  hops: z.number().int().nonnegative(),
  name: z.string(),
  payload: z.looseObject({ sessionId: z.string() }),
  correlationId: z.string(),
  sessionId: z.string().optional(),
});
export type WireCommand = z.infer<typeof wireCommand>;

const wireReply = z.discriminatedUnion('ok', [
  // `result` is absent when the handler resolved with nothing (JSON drops undefined).
  z.object({ kind: z.literal('reply'), id: z.string(), ok: z.literal(true), result: z.unknown().optional() }),
  z.object({
    kind: z.literal('reply'),
    id: z.string(),
    ok: z.literal(false),
    error: z.object({ code: errorCode, message: z.string(), details: z.record(z.string(), z.unknown()) }),
  }),
]);
export type WireReply = z.infer<typeof wireReply>;

export const inboxMessage = z.discriminatedUnion('kind', [wireCommand, wireReply]);

/** An `agent.*` event on its session's live channel. */
export const wireEvent = z.object({
  from: z.string(),
  name: z.string(),
  payload: z.unknown().optional(),
  correlationId: z.string(),
  sessionId: z.string().optional(),
  /** The time the event stands for (its envelope's `ts`); absent from an older instance. */
  ts: z.number().optional(),
  /** A stored fact sent as its seq alone (`payload: { seq }`): the watcher reads it from the store (on Postgres). */
  ref: z.literal(true).optional(),
});
export type WireEvent = z.infer<typeof wireEvent>;

/** A watcher's request to a session's holder (on the holder's notice channel): publish its frames, and say so. */
export const watchNotice = z.object({
  sessionId: z.string(),
  nonce: z.string(),
  /** A watcher's renewal (on a medium that cannot count listeners): keep publishing; no seed, no acknowledgement. */
  renew: z.literal(true).optional(),
});
export type WatchNotice = z.infer<typeof watchNotice>;

/** A runtime tool-server change as recorded and published: `config` for a connect. */
export const toolServerChange = z.discriminatedUnion('op', [
  /** `kind: "a2a"`: an A2A agent (`mcp.connectA2aAgent`); absent: an MCP server. */
  z.object({
    op: z.literal('connect'),
    name: z.string(),
    config: z.unknown().optional(),
    kind: z.literal('a2a').optional(),
  }),
  z.object({ op: z.literal('remove'), name: z.string() }),
  z.object({ op: z.literal('restart'), name: z.string() }),
]);
export type ToolServerChange = z.infer<typeof toolServerChange>;
export const toolServerChangeMessage = z.object({ from: z.string(), change: toolServerChange });

/** One instance's status of one tool server. */
export const toolServerStatus = z.object({ status: z.string(), error: z.string().optional() });
export type ToolServerStatus = z.infer<typeof toolServerStatus>;

export function readWire<S extends z.ZodType>(
  schema: S,
  raw: string,
  where: string,
  log: Pick<Logger, 'warn'>,
): z.infer<S> | undefined {
  let reason: string;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    reason = issue ? `${issue.path.join('.') || '(message)'}: ${issue.message}`.slice(0, WIRE_PREFIX_CHARS) : 'invalid';
  } catch {
    reason = 'not JSON';
  }
  log.warn({ channel: where, reason, prefix: raw.slice(0, WIRE_PREFIX_CHARS) }, 'cluster: dropped an invalid message');
  return undefined;
}
