/** Pure pieces of a turn: planning a step's tool calls (their argument JSON validated here), the reply, the iteration limit. */
import { isAppError, type ErrorBody, messageOf } from '../errors/index.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../json-depth.ts';
import type { ToolCallRequest } from './model-messages.ts';
import type { RemoteTask } from './session-event-fields.ts';
import { EVENT_VERSION, type SessionEventOf } from './session-events.ts';
import type { ModelTool, ModelToolOutcome } from './tool-shapes.ts';

/** Between the texts of two model steps of one turn (the chunks carry it too). */
export const STEP_SEPARATOR = '\n\n';

/** A tool call of a model step, resolved against the catalogue. */
export interface PlannedCall {
  callId: string;
  /** Model-visible name. */
  name: string;
  /** Server-side name and server ('' when the model named an unknown tool). */
  toolName: string;
  serverId: string;
  /** Parsed arguments, or the raw text when it was not a JSON object. */
  args: unknown;
  /** Error text for the model when the call cannot run (it is answered at once, never called). */
  error?: string;
  /** The tool policy asks a person before this call runs. */
  needsApproval?: true;
  /** The client runs it: the call waits for the client's result (a `clientTool` question). */
  runsOnClient?: true;
  /** Its tool says a second run does no harm (read-only or idempotent): a resumed turn may run it again. */
  rerunSafe?: true;
  /** A task its server created for it before the turn's process stopped (a `toolTask`): a resumed turn polls it again. */
  task?: RemoteTask;
  /** The call is an MCP App's (TurnMessage `app`): the tool call whose app made it. */
  appCallId?: string;
}

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/** Tool arguments as the model sent them: a JSON object, or empty for "no arguments". */
function parseToolArgs(text: string): Parsed {
  if (text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `not valid JSON (${messageOf(e)})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  if (tooDeep(value)) return { ok: false, reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  return { ok: true, value: value as Record<string, unknown> };
}

/** One call per request of the step, resolved against the catalogue the step was offered. */
export function planCalls(calls: readonly ToolCallRequest[], tools: readonly ModelTool[]): PlannedCall[] {
  return calls.map((call) => {
    const tool = tools.find((t) => t.name === call.name);
    const parsed = parseToolArgs(call.arguments);
    const base = {
      callId: call.id,
      name: call.name,
      toolName: tool?.toolName ?? call.name,
      serverId: tool?.serverId ?? '',
    };
    if (!parsed.ok) {
      return {
        ...base,
        args: call.arguments,
        error: `Invalid arguments for tool "${call.name}": ${parsed.reason}. Call it again with a JSON object.`,
      };
    }
    const planned = { ...base, args: parsed.value, ...(tool?.rerunSafe && { rerunSafe: true as const }) };
    if (!tool) {
      const known = tools.map((t) => t.name).join(', ') || 'none';
      return { ...planned, error: `Unknown tool "${call.name}". Available tools: ${known}.` };
    }
    if (tool.client) return { ...planned, runsOnClient: true };
    if (tool.action === 'deny')
      return { ...planned, error: `Tool "${call.name}" is not allowed here (tool policy: deny). It was not called.` };
    return tool.action === 'ask' ? { ...planned, needsApproval: true } : planned;
  });
}

/** The reply after a step: non-empty step texts joined by STEP_SEPARATOR. */
export function stepReply(reply: string, text: string): string {
  if (text === '') return reply;
  return reply === '' ? text : reply + STEP_SEPARATOR + text;
}

export const iterationLimitMessage = (max: number): string =>
  `I stopped here because this turn reached the iteration limit (${max} model steps) before I could finish. ` +
  'Ask me to continue if you want me to go on.';

/** The turn's whole reply; when capped, the limit message (with its separator) is also its last chunk. */
export function finalReply(
  reply: string,
  capped: boolean,
  max: number,
): { content: string; capChunk?: string; capMessage?: string } {
  if (!capped) return { content: reply };
  const capMessage = iterationLimitMessage(max);
  const capChunk = (reply === '' ? '' : STEP_SEPARATOR) + capMessage;
  return { content: reply + capChunk, capChunk, capMessage };
}

/** What a failed turn reports: an AppError keeps its code; anything else is an AGENT_ERROR naming the cause. */
/** The stored AGENT_ERROR `turnFailed` that ends a turn for `reason`; `cancelled` when it was cancelled or discarded. */
export const agentTurnFailed = (
  turnId: string,
  message: string,
  reason: string,
  cancelled?: true,
): SessionEventOf<'turnFailed'> => ({
  v: EVENT_VERSION,
  type: 'turnFailed',
  turnId,
  code: 'AGENT_ERROR',
  message,
  details: { reason },
  ...(cancelled && { cancelled }),
});

export function toTurnError(err: unknown): ErrorBody {
  if (isAppError(err)) return { code: err.code, message: err.message, details: { ...err.details } };
  const cause = messageOf(err);
  return { code: 'AGENT_ERROR', message: `Agent processing failed: ${cause}`, details: {} };
}

/** What the model is told of a call a person (or the timeout) denied. */
export function deniedText(name: string, by: string, reason: string | undefined): string {
  const who = by === 'timeout' ? 'no one approved it in time' : `it was denied (${by})`;
  return `Tool "${name}" was not called: ${who}${reason ? `. Reason: ${reason}` : ''}.`;
}

/** A call that could not run or threw: a failed result the model can read. */
export function failedOutcome(
  call: Pick<PlannedCall, 'name' | 'toolName' | 'serverId'>,
  reason: string,
  durationMs = 0,
): ModelToolOutcome {
  const text = `Tool "${call.name}" failed: ${reason}`;
  return {
    success: false,
    text,
    result: { error: text },
    serverId: call.serverId,
    toolName: call.toolName,
    durationMs,
  };
}
