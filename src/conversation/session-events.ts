/**
 * The durable facts of a session: what the session and turn machines emit, what the store keeps,
 * and what every client frame, replay and history listing is derived from (src/agent/frames.ts).
 *
 * Contracts:
 * - `sessionEventSchema` is the one source of the TypeScript type and of load-time validation.
 * - Every event carries `v` (now {@link EVENT_VERSION}). A stored line without `v` is version 1
 *   and is upcast on load by {@link parseSessionEvent}; a line that fits no version is rejected.
 * - An event carries everything its frame needs: `toolResult` has the structured `result` (the
 *   frame's) and `text` (what the model was given); `response` has `content` (the whole reply, all
 *   steps joined: the frame's) and `text` (the last step's text: what the history keeps).
 * - `messageQueued` (added within version 2: a new type changes no existing shape, so no upcast is
 *   needed; a reader older than it rejects those lines only) records a message accepted while its
 *   session was busy, before it is acknowledged. It is started by the later `userMessage` of the
 *   same turnId, and ended unstarted by a `turnFailed` of that turnId (discarded) or a `reset`;
 *   otherwise it is still queued, and a session opened from the log runs it (src/agent/queue.ts).
 *   It has no frame: the caller already has its acknowledgement, and the turn's frames start with
 *   its `userMessage`.
 * - `serverSampled` (added within version 3, a new type like `messageQueued`: no upcast) records the tokens
 *   the agent's model spent answering a tool server's `sampling/createMessage` (src/tools/mcp/sampling.ts);
 *   the usage totals fold it. It has no frame and is not part of the model's history.
 * - Version 3 adds `contextCompacted`: the model's history was made smaller, as a fact in the log
 *   (nothing is rewritten). `method: "clearToolResults"` replaces the text of every tool result
 *   with seq ≤ `upToSeq` by a marker in the projection; `method: "summary"` replaces everything with
 *   seq ≤ `upToSeq` by `summary` (src/agent/session/history.ts folds both). `readFrom` is the seq from which
 *   a reader must read the log to rebuild the session as it stood (the projection, and messages
 *   still queued), so a session reopens from its latest compaction. `usageTotal` is the session's
 *   model usage so far (every model step, the summary request included); `usage` that of the
 *   summary request alone. Older lines (v1, v2) are upcast; their shapes did not change.
 * - `elicitationRequested` / `elicitationResolved` (added within version 3, like `messageQueued`: new
 *   types, no upcast): a tool server asked the user something while the call `callId` ran (a form:
 *   `requestedSchema`, or a URL to open: `url`), and how it was answered. The answer's `content` (what
 *   the user typed) is stored in the resolution; its frame does not carry it. A request is pending
 *   until its resolution, its turn's end or a reset (src/agent/session/state.ts).
 * - Per-step model usage (prompt, completion, total tokens) lives on `assistantStep` (a step that
 *   asked for tools), `response` (the turn's last step) and `contextCompacted` (its summary
 *   request): summing those three over a log gives every token the session cost. `assistantStep`
 *   and `response` also carry `usageTotal` (optional within version 3: older lines lack it), the
 *   session's totals once the step was spent, so the latest of those three events alone tells a
 *   session's totals (how `GET /api/sessions` lists sessions that are not in memory).
 * - `reasoning` (added within version 3, a new type: no upcast) is what the model reasoned before a
 *   step, stored just before that step's `assistantStep` or `response`: `text` for people (its
 *   frame), `api` the model API that produced it, `model` and `endpoint` (optional: the origin and
 *   path of the base URL it was reached at) the model that did, and `replay` the opaque items that
 *   API needs back (Anthropic thinking blocks with signatures, Responses reasoning items with
 *   `encrypted_content`); the history gives it to the next assistant message, and it is sent back
 *   only to the same api, model and endpoint (src/llm). Exports leave it out unless asked.
 * - Usage may carry `cachedTokens` (read from the provider's prompt cache) and `cacheWriteTokens`
 *   (written to it), both already counted in `promptTokens`; `assistantStep` and `response` may
 *   carry `fallbacks`: the models (llm.fallback) that failed before the one named in `model` answered.
 */
import { z } from 'zod';
import { attachedSchema } from './attachments.ts';

export const EVENT_VERSION = 3;
const v = z.literal(EVENT_VERSION);

const turnId = z.string();
const image = z.object({ mimeType: z.string(), base64: z.string() });
const usage = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  cachedTokens: z.number().exactOptional(),
  cacheWriteTokens: z.number().exactOptional(),
});
const fallbacks = z
  .array(
    z.object({
      model: z.string(),
      provider: z.string(),
      reason: z.string(),
      status: z.number().optional(),
      message: z.string(),
    }),
  )
  .optional();
export const modelApi = z.enum(['chat', 'responses', 'messages']);
/** Why a compaction ran: the estimate crossed `threshold × contextWindow`, the provider said the request overflowed, or someone asked. */
export const compactionTrigger = z.enum(['threshold', 'overflow', 'manual']);
export type CompactionTrigger = z.output<typeof compactionTrigger>;
export const compactionMethod = z.enum(['clearToolResults', 'summary']);
export type CompactionMethod = z.output<typeof compactionMethod>;
const toolCallRequest = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
export const approvalDecision = z.enum(['approve', 'deny']);
export type ApprovalDecision = z.output<typeof approvalDecision>;
export const elicitationAction = z.enum(['accept', 'decline', 'cancel']);
export type ElicitationAction = z.output<typeof elicitationAction>;
const elicitationContent = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]));
const toolRef = { turnId, callId: z.string(), toolName: z.string(), serverId: z.string() };

export const sessionEventSchema = z.discriminatedUnion('type', [
  /** `attached`: resources and a prompt's messages the model got with it (optional within version 2; see attachments.ts). */
  z.object({
    v,
    type: z.literal('userMessage'),
    turnId,
    content: z.string(),
    image: image.optional(),
    attached: attachedSchema.optional(),
  }),
  /** A model step that asked for tools (audit and history; it has no frame). */
  z.object({
    v,
    type: z.literal('assistantStep'),
    turnId,
    text: z.string(),
    toolCalls: z.array(toolCallRequest),
    model: z.string(),
    usage: usage.optional(),
    usageTotal: usage.optional(),
    fallbacks,
  }),
  /** What the model reasoned before the step that follows (see the contracts). */
  z.object({
    v,
    type: z.literal('reasoning'),
    turnId,
    model: z.string(),
    endpoint: z.string().optional(),
    api: modelApi,
    text: z.string(),
    replay: z.array(z.record(z.string(), z.unknown())).optional(),
  }),
  z.object({ v, type: z.literal('toolCall'), ...toolRef, args: z.unknown() }),
  z.object({
    v,
    type: z.literal('toolResult'),
    ...toolRef,
    success: z.boolean(),
    result: z.unknown(),
    text: z.string(),
    durationMs: z.number(),
  }),
  z.object({
    v,
    type: z.literal('response'),
    turnId,
    content: z.string(),
    text: z.string(),
    model: z.string(),
    usage: usage.optional(),
    usageTotal: usage.optional(),
    fallbacks,
  }),
  /** A turn that failed or was cancelled (`cancelled`); `details.reason` says why when cancelled. */
  z.object({
    v,
    type: z.literal('turnFailed'),
    turnId,
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
    cancelled: z.boolean().optional(),
  }),
  /** A call that waits for a person's approval (tool policy `ask`); `expiresAt` is when it is denied unanswered. */
  z.object({ v, type: z.literal('toolApprovalRequested'), ...toolRef, args: z.unknown(), expiresAt: z.string() }),
  /** The answer to an approval request: by whom (`rest`, `websocket`, `timeout`, `cancelled`, `reset`, ...), and why. */
  z.object({
    v,
    type: z.literal('toolApprovalResolved'),
    turnId,
    callId: z.string(),
    decision: approvalDecision,
    by: z.string(),
    reason: z.string().optional(),
  }),
  /** A tool server's question during the call `callId` (see the contracts); `expiresAt`: when it is declined unanswered. */
  z.object({
    v,
    type: z.literal('elicitationRequested'),
    turnId,
    id: z.string(),
    callId: z.string(),
    serverId: z.string(),
    message: z.string(),
    mode: z.enum(['form', 'url']),
    requestedSchema: z.record(z.string(), z.unknown()).optional(),
    url: z.string().optional(),
    expiresAt: z.string(),
  }),
  /** Its answer: by whom (`rest`, `websocket`, `timeout`, `call-ended`, `restart`, ...); `content` only when accepted with a form. */
  z.object({
    v,
    type: z.literal('elicitationResolved'),
    turnId,
    id: z.string(),
    action: elicitationAction,
    by: z.string(),
    content: elicitationContent.optional(),
  }),
  z.object({ v, type: z.literal('reset') }),
  /** A message waiting behind a running turn, stored before it is acknowledged (see the contracts). */
  z.object({
    v,
    type: z.literal('messageQueued'),
    turnId,
    correlationId: z.string(),
    content: z.string(),
    image: image.optional(),
    hops: z.number().int().nonnegative().optional(),
    attached: attachedSchema.optional(),
  }),
  /** A tool server's sampling request answered by the agent's model during call `callId` (see the contracts). */
  z.object({
    v,
    type: z.literal('serverSampled'),
    turnId,
    callId: z.string(),
    serverId: z.string(),
    model: z.string(),
    usage,
  }),
  /** The history was compacted (see the contracts); `turnId` when it ran inside a turn. */
  z.object({
    v,
    type: z.literal('contextCompacted'),
    method: compactionMethod,
    trigger: compactionTrigger,
    upToSeq: z.number().int().nonnegative(),
    readFrom: z.number().int().positive(),
    summary: z.string().optional(),
    tokensBefore: z.number().int().nonnegative(),
    tokensAfter: z.number().int().nonnegative(),
    turnId: turnId.optional(),
    model: z.string().optional(),
    usage: usage.optional(),
    usageTotal: usage,
  }),
]);

export type SessionEvent = z.output<typeof sessionEventSchema>;
export type SessionEventType = SessionEvent['type'];
export type SessionEventOf<T extends SessionEventType> = Extract<SessionEvent, { type: T }>;

/** Version 1: lines written before `v` existed. */
const v1Schema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('userMessage'), turnId, content: z.string(), image: image.optional() }),
  z.object({
    type: z.literal('assistantMessage'),
    turnId,
    content: z.string(),
    toolCalls: z.array(toolCallRequest).optional(),
    final: z.boolean(),
    model: z.string(),
    usage: usage.optional(),
  }),
  z.object({ type: z.literal('toolCall'), ...toolRef, args: z.unknown() }),
  z.object({
    type: z.literal('toolResult'),
    ...toolRef,
    success: z.boolean(),
    result: z.string(),
    durationMs: z.number(),
  }),
  z.object({ type: z.literal('reset') }),
  z.object({
    type: z.literal('turnFailed'),
    turnId,
    code: z.string(),
    message: z.string(),
    cancelled: z.boolean().optional(),
  }),
]);

type V1Event = z.output<typeof v1Schema>;

const withUsage = (u: V1Event & { usage?: z.output<typeof usage> | undefined }) => (u.usage ? { usage: u.usage } : {});

function upcast(e: V1Event): SessionEvent {
  switch (e.type) {
    case 'userMessage':
      return {
        v: EVENT_VERSION,
        type: e.type,
        turnId: e.turnId,
        content: e.content,
        ...(e.image && { image: e.image }),
      };
    case 'assistantMessage':
      return e.final
        ? {
            v: EVENT_VERSION,
            type: 'response',
            turnId: e.turnId,
            content: e.content,
            text: e.content,
            model: e.model,
            ...withUsage(e),
          }
        : {
            v: EVENT_VERSION,
            type: 'assistantStep',
            turnId: e.turnId,
            text: e.content,
            toolCalls: e.toolCalls ?? [],
            model: e.model,
            ...withUsage(e),
          };
    case 'toolCall':
      return { ...e, v: EVENT_VERSION };
    case 'toolResult':
      // Version 1 kept only the text the model was given; it stands for the result too.
      return { ...e, v: EVENT_VERSION, text: e.result };
    case 'reset':
      return { v: EVENT_VERSION, type: 'reset' };
    case 'turnFailed': {
      const { cancelled, ...rest } = e;
      return {
        ...rest,
        v: EVENT_VERSION,
        details: cancelled ? { reason: 'cancelled' } : {},
        ...(cancelled && { cancelled }),
      };
    }
  }
}

/** A raw event checked: the current version's event (upcast from an older one), or why it is none. */
export type EventCheck = { ok: true; event: SessionEvent } | { ok: false; issue: string };

/**
 * Checks a raw stored event of any version this agentd reads and upcasts it to the current one; when
 * it fits none, says why in words (what an import names for its bad line). Version 2 has every shape
 * of version 3 but `contextCompacted`, which did not exist yet.
 */
export function checkSessionEvent(raw: unknown): EventCheck {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, issue: 'event must be a JSON object' };
  const version = (raw as { v?: unknown }).v ?? 1;
  const why = (error: z.ZodError): EventCheck => {
    const first = error.issues[0];
    const at = first && first.path.length > 0 ? `event.${first.path.map(String).join('.')}` : 'event';
    return { ok: false, issue: `${at}: ${first?.message ?? 'invalid'}` };
  };
  if (version === EVENT_VERSION || version === 2) {
    if (version === 2 && (raw as { type?: unknown }).type === 'contextCompacted')
      return { ok: false, issue: 'event.type: contextCompacted is not a version 2 event' };
    const parsed = sessionEventSchema.safeParse({ ...raw, v: EVENT_VERSION });
    return parsed.success ? { ok: true, event: parsed.data } : why(parsed.error);
  }
  if (version === 1) {
    const parsed = v1Schema.safeParse(raw);
    return parsed.success ? { ok: true, event: upcast(parsed.data) } : why(parsed.error);
  }
  return {
    ok: false,
    issue: `event.v: version ${JSON.stringify(version)} is not one this agentd reads (1 to ${EVENT_VERSION})`,
  };
}

/** A stored event of any version as the current version; `undefined` when it fits none. */
export function parseSessionEvent(raw: unknown): SessionEvent | undefined {
  const checked = checkSessionEvent(raw);
  return checked.ok ? checked.event : undefined;
}
