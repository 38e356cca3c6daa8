/**
 * What a webhook announces, mapped from the session's stored facts as their frames reach the bus (`agent.<frame>`,
 * published once stored, with the stored event's seq): `turn.completed` (a `response`), `turn.failed` (an `error`
 * of a turn), `question.asked` and `question.expired` (a question closed by `timeout`); `session.deleted` comes from
 * the agent's deletion. An event's id names its fact (session key, seq, type), so every announcement of one fact,
 * from any instance, is one delivery. `data` carries ids and a summary (the reply's first 500 characters), never a
 * tool's arguments or a form's content.
 */
import { answerOfFrame, questionOfFrame, type AgentFrameData } from '../agent/index.ts';
import type { WebhookEventType } from '../config/schema.ts';
import { splitSessionKey } from '../session-id.ts';

export interface WebhookEvent {
  /** The fact's id: one delivery per webhook and id. */
  id: string;
  type: WebhookEventType;
  /** The session's key (its owner and id). */
  sessionKey: string;
  /** ISO 8601: when the fact was stored. */
  timestamp: string;
  data: Record<string, unknown>;
}

export const SUMMARY_CHARS = 500;

/** The bus events the mapping reads. */
export const WATCHED = [
  'agent.response',
  'agent.error',
  'agent.toolApprovalRequested',
  'agent.elicitationRequested',
  'agent.clientToolRequested',
  'agent.toolApprovalResolved',
  'agent.elicitationResolved',
  'agent.clientToolResolved',
] as const;

const sessionFields = (key: string) => {
  const { owner, id } = splitSessionKey(key);
  return { sessionId: id, ...(owner !== undefined && { principal: owner }) };
};

function event(type: WebhookEventType, key: string, seq: number, at: number, data: object): WebhookEvent {
  return {
    id: `${key}#${seq}#${type}`,
    type,
    sessionKey: key,
    timestamp: new Date(at).toISOString(),
    data: { ...sessionFields(key), ...data },
  };
}

/** The webhook event of an agent bus event (`name`, its frame's `data`, stored at `at`), if it is one. */
export function webhookEventOf(name: string, payload: unknown, at: number): WebhookEvent | undefined {
  const frame = { event: name.slice('agent.'.length), data: payload as { sessionId: string; seq: number } };
  const { sessionId: key, seq } = frame.data;
  if (name === 'agent.response') {
    const r = payload as AgentFrameData['response'];
    const summary = r.content.slice(0, SUMMARY_CHARS);
    return event('turn.completed', key, seq, at, {
      turnId: r.turnId,
      seq,
      model: r.model,
      summary,
      truncated: summary.length < r.content.length,
      ...(r.usage && { usage: r.usage }),
    });
  }
  if (name === 'agent.error') {
    const e = payload as AgentFrameData['error'];
    if (e.turnId === undefined) return undefined;
    const reason = typeof e.details.reason === 'string' ? { reason: e.details.reason } : {};
    return event('turn.failed', key, seq, at, { turnId: e.turnId, seq, code: e.code, message: e.message, ...reason });
  }
  const question = questionOfFrame(frame);
  if (question) {
    const named = 'toolName' in question && question.toolName !== undefined ? { toolName: question.toolName } : {};
    return event('question.asked', key, seq, at, {
      turnId: question.turnId,
      seq,
      questionId: question.id,
      kind: question.kind,
      serverId: question.serverId,
      expiresAt: question.expiresAt,
      ...named,
      ...(question.kind === 'elicitation' && question.message !== undefined && { message: question.message }),
      ...(question.kind === 'budget' && { budget: question.args }),
    });
  }
  const answer = answerOfFrame(frame);
  if (answer?.by !== 'timeout') return undefined;
  const turnId = (payload as { turnId?: string }).turnId;
  return event('question.expired', key, seq, at, { turnId, seq, questionId: answer.id });
}

/** `session.deleted` of the session `key`, deleted at `at` (`nonce` tells two deletions of one id apart). */
export const deletedEvent = (key: string, at: number, nonce: string): WebhookEvent => ({
  id: `${key}#deleted#${nonce}`,
  type: 'session.deleted',
  sessionKey: key,
  timestamp: new Date(at).toISOString(),
  data: sessionFields(key),
});
