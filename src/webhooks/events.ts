/**
 * What a webhook announces, mapped from the session's stored facts (handed to the webhooks' reaction on the session's
 * owner): `turn.completed` (a `response`), `turn.failed` (a `turnFailed`), `question.asked` (a `questionAsked`) and
 * `question.expired` (a `questionClosed` by `timeout`); `session.deleted` comes from the agent's deletion. An event's
 * id names its fact (session key, seq, type), so every announcement of one fact, from any instance, is one delivery.
 * `data` carries ids and a summary (the reply's first 500 characters), never a tool's arguments or a form's content.
 */
import type { SessionStoredEvent } from '../agent/index.ts';
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

const sessionFields = (key: string) => {
  const { owner, id } = splitSessionKey(key);
  return { sessionId: id, ...(owner !== undefined && { principal: owner }) };
};

/** The event `type` of a turn's fact `stored`: its session, turn and seq first in `data`. */
function event(type: WebhookEventType, stored: SessionStoredEvent, turnId: string, data: object): WebhookEvent {
  const { sessionId: key, seq } = stored;
  return {
    id: `${key}#${seq}#${type}`,
    type,
    sessionKey: key,
    timestamp: new Date(Date.parse(stored.ts)).toISOString(),
    data: { ...sessionFields(key), turnId, seq, ...data },
  };
}

/** What `question.asked` says of a question: its ids and kind, never its arguments (a budget's figures only). */
const askedData = (q: Extract<SessionStoredEvent['event'], { type: 'questionAsked' }>['question']) => ({
  questionId: q.id,
  kind: q.kind,
  serverId: q.serverId,
  expiresAt: q.expiresAt,
  ...((q.kind === 'approval' || q.kind === 'clientTool') && { toolName: q.toolName ?? '' }),
  ...(q.kind === 'elicitation' && { message: q.message ?? '' }),
  ...(q.kind === 'budget' && { budget: q.args }),
});

/** The webhook event of a stored fact, if it is one. */
export function webhookEventOf(stored: SessionStoredEvent): WebhookEvent | undefined {
  const e = stored.event;
  switch (e.type) {
    case 'response': {
      const summary = e.content.slice(0, SUMMARY_CHARS);
      const truncated = summary.length < e.content.length;
      return event('turn.completed', stored, e.turnId, {
        ...{ model: e.model, summary, truncated },
        ...(e.usage && { usage: e.usage }),
      });
    }
    case 'turnFailed': {
      const reason = typeof e.details.reason === 'string' ? { reason: e.details.reason } : {};
      return event('turn.failed', stored, e.turnId, { code: e.code, message: e.message, ...reason });
    }
    case 'questionAsked':
      return event('question.asked', stored, e.turnId, askedData(e.question));
    case 'questionClosed':
      return e.by === 'timeout' ? event('question.expired', stored, e.turnId, { questionId: e.id }) : undefined;
    default:
      return undefined;
  }
}

/** `session.deleted` of the session `key`, deleted at `at` (`nonce` tells two deletions of one id apart). */
export const deletedEvent = (key: string, at: number, nonce: string): WebhookEvent => ({
  id: `${key}#deleted#${nonce}`,
  type: 'session.deleted',
  sessionKey: key,
  timestamp: new Date(at).toISOString(),
  data: sessionFields(key),
});
