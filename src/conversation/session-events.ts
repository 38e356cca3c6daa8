/**
 * The durable facts of a session: what the machines emit, the store keeps, and every frame, replay and
 * history listing derives from (src/agent/frames.ts).
 * - Every event carries `v`; `checkSessionEvent`/`parseSessionEvent` read every version this agentd knows (v1, and
 *   the six question types of v2 and v3, are upcast) and refuse the rest. A new event type joins the current version; a changed shape is a new version.
 * - `toolResult.result` is the frame's, `text` the model's; `response.content` joins every step's text, `text` is the last's.
 * - Usage sits on `assistantStep`, `response`, `contextCompacted` (their sum is the session's cost; `usageTotal` on
 *   the latest is its total) and `serverSampled`; a priced step's usage has its `cost`, totals their `costs`.
 * - An added optional field (usage's `reasoningTokens`, `cost`, `costs`; `fallbacks`; `toolResult.app`; `contextCompacted.apps`) is no new version: a log
 *   without it reads as it did, and nothing it had changes meaning.
 * - `messageQueued` (no frame) is started by its turn's `userMessage`, dropped by its `turnFailed` or a `reset`;
 *   still queued when the session reopens, it runs.
 * - `contextCompacted` shrinks the history as a fact (nothing rewritten); a reader rebuilds from its `readFrom`.
 * - `reasoning` precedes its step's event; `replay` goes back only to the same `api`, `model` and `endpoint`.
 * - `turnResumed` (no bump: an added type) counts the times a turn was taken up again after its process stopped.
 * - `appCallId` (an added optional field, no bump) marks a turn an MCP App made (its `userMessage`: the turn's one step
 *   is the app's call of a tool, not a model's) and that call's `toolCall` and `toolResult`; it names the tool call whose
 *   app made it. Such a turn has no `response`: it ends with its call's `toolResult` (or a `turnFailed`).
 */
import { z } from 'zod';
import { attachedSchema } from './attachments.ts';
import { question, questionAnswer } from './records.ts';
import {
  clientTool,
  fallbacks,
  image,
  remoteTask,
  toolCallRequest,
  toolRef,
  turnId,
  usage,
} from './session-event-fields.ts';
import { v1Schema, type V1Event } from './session-events-v1.ts';
import { V3_QUESTION_TYPES, upcastV3Question, v3QuestionSchema } from './session-events-v3.ts';
import { MODEL_APIS } from './model-messages.ts';
import { toolApp } from './tool-app.ts';

export const EVENT_VERSION = 4;
const v = z.literal(EVENT_VERSION);

const modelApi = z.enum(MODEL_APIS);
/** Why a compaction ran: the estimate crossed `threshold × contextWindow`, the provider said the request overflowed, or someone asked. */
const compactionTrigger = z.enum(['threshold', 'overflow', 'manual']);
export type CompactionTrigger = z.output<typeof compactionTrigger>;
const compactionMethod = z.enum(['clearToolResults', 'summary']);
export type CompactionMethod = z.output<typeof compactionMethod>;
/** A stored question: the record without what its log and event say (its session, its turn). */
const storedQuestion = question.omit({ sessionId: true, turnId: true });
export type StoredQuestion = z.output<typeof storedQuestion>;

const sessionEventSchema = z.discriminatedUnion('type', [
  /** `attached`: resources and prompt messages the model got (attachments.ts); `clientTools`: offered for this turn only. */
  z.object({
    v,
    type: z.literal('userMessage'),
    turnId,
    content: z.string(),
    image: image.optional(),
    attached: attachedSchema.optional(),
    clientTools: z.array(clientTool).optional(),
    appCallId: z.string().optional(),
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
  /** `rerunSafe`: its tool said a second run does no harm (read-only or idempotent), so a resumed turn runs it again. */
  z.object({
    v,
    type: z.literal('toolCall'),
    ...toolRef,
    args: z.unknown(),
    rerunSafe: z.literal(true).optional(),
    appCallId: z.string().optional(),
  }),
  /** The tool server runs call `callId` as a task (MCP tasks): recorded once created, so a resumed turn polls it. */
  z.object({ v, type: z.literal('toolTask'), turnId, callId: z.string(), ...remoteTask.shape }),
  /** `app`: the MCP App its tool names, or why it has none (tool-app.ts; an added field, no new version). */
  z.object({
    v,
    type: z.literal('toolResult'),
    ...toolRef,
    success: z.boolean(),
    result: z.unknown(),
    text: z.string(),
    durationMs: z.number(),
    app: toolApp.exactOptional(),
    appCallId: z.string().optional(),
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
  /**
   * A question for a person (records.ts `question`; its `kind` says what is asked), pending until its
   * `questionClosed`, its turn's end or a reset. Its session is the log's, its turn the event's.
   */
  z.object({ v, type: z.literal('questionAsked'), turnId, question: storedQuestion }),
  /**
   * Its answer (`answer`'s keys name the family of its kind), by what (`rest`, `websocket`, `timeout`, `cancelled`,
   * ...) and, when a signed-in caller gave it, by whom (`principal`: a key's name or `jwt:<subject>`).
   */
  z.object({
    v,
    type: z.literal('questionClosed'),
    turnId,
    id: z.string(),
    answer: questionAnswer,
    by: z.string(),
    principal: z.string().optional(),
  }),
  z.object({ v, type: z.literal('reset') }),
  /**
   * A turn its process left running, taken up again (`attempt`: 1 for the first time) from its last durable step;
   * `reply` is its reply so far (the stored steps' text): what streamed after it is superseded.
   */
  z.object({ v, type: z.literal('turnResumed'), turnId, attempt: z.number().int().positive(), reply: z.string() }),
  /** A message waiting behind a running turn, stored before it is acknowledged. */
  z.object({
    v,
    type: z.literal('messageQueued'),
    turnId,
    correlationId: z.string(),
    content: z.string(),
    image: image.optional(),
    hops: z.number().int().nonnegative().optional(),
    attached: attachedSchema.optional(),
    clientTools: z.array(clientTool).optional(),
  }),
  /** A tool server's sampling request answered by the agent's model during call `callId`. */
  z.object({
    v,
    type: z.literal('serverSampled'),
    turnId,
    callId: z.string(),
    serverId: z.string(),
    model: z.string(),
    usage,
  }),
  /** `clearToolResults` marks every tool result with seq ≤ `upToSeq`; `summary` stands for everything up to it. */
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
    /** The MCP Apps kept with the session's tool calls so far (callId → serverId): a reader from `readFrom` knows them. */
    apps: z.record(z.string(), z.string()).optional(),
  }),
]);

export type SessionEvent = z.output<typeof sessionEventSchema>;
/** Every type a session event has (the store's `latest` of any of them is the session's last event). */
export const SESSION_EVENT_TYPES: readonly SessionEvent['type'][] = sessionEventSchema.options.map(
  (o) => o.shape.type.value,
);
export type SessionEventOf<T extends SessionEvent['type']> = Extract<SessionEvent, { type: T }>;

/** Whether `e` ends an MCP App's call's turn: that call's `toolResult` (the turn has no `response`). */
export const endsAppCall = (e: SessionEvent): e is SessionEventOf<'toolResult'> =>
  e.type === 'toolResult' && e.appCallId !== undefined;

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

export type EventCheck = { ok: true; event: SessionEvent } | { ok: false; issue: string };

/** A raw stored event of any known version upcast to the current one, or why it is none (an import names it for its bad line). */
export function checkSessionEvent(raw: unknown): EventCheck {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, issue: 'event must be a JSON object' };
  const version = (raw as { v?: unknown }).v ?? 1;
  const why = (error: z.ZodError): EventCheck => {
    const first = error.issues[0];
    const at = first && first.path.length > 0 ? `event.${first.path.map(String).join('.')}` : 'event';
    return { ok: false, issue: `${at}: ${first?.message ?? 'invalid'}` };
  };
  if (version === EVENT_VERSION) {
    const parsed = sessionEventSchema.safeParse(raw);
    return parsed.success ? { ok: true, event: parsed.data } : why(parsed.error);
  }
  if (version === 2 || version === 3) {
    // Version 3 is this one with six question types for the pair; version 2 is version 3 without `contextCompacted`.
    const type = (raw as { type?: unknown }).type;
    if (typeof type === 'string' && V3_QUESTION_TYPES.has(type)) {
      const parsed = v3QuestionSchema.safeParse(raw);
      return parsed.success
        ? { ok: true, event: { v: EVENT_VERSION, ...upcastV3Question(parsed.data) } }
        : why(parsed.error);
    }
    if (type === 'questionAsked' || type === 'questionClosed' || (version === 2 && type === 'contextCompacted'))
      return { ok: false, issue: `event.type: ${type} is not a version ${version} event` };
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

export function parseSessionEvent(raw: unknown): SessionEvent | undefined {
  const checked = checkSessionEvent(raw);
  return checked.ok ? checked.event : undefined;
}
