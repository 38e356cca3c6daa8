/**
 * The session facts a turn reports, built from what the turn holds: pure, one builder per event type (toolResult's:
 * src/conversation/turn-questions.ts), fields in the order they are stored (src/conversation/session-events.ts).
 */
import type { ModelAttempt, ModelStep, StepReasoning, Usage } from '../../src/conversation/model-messages.ts';
import { EVENT_VERSION as v, type SessionEvent, type SessionEventOf } from '../../src/conversation/session-events.ts';
import type { TurnKey, TurnMessage, TurnReport } from '../../src/conversation/turn-contract.ts';
import type { PlannedCall } from '../../src/conversation/turn-steps.ts';
import type { ErrorBody } from '../../src/errors/index.ts';
import type { LastStep } from './context.ts';

/** A fact as the turn reports it to its session. */
export const fact = (key: TurnKey, event: SessionEvent): TurnReport => ({ type: 'fact', key, event });

/** The optional parts of a step's fact: its usage and the models that failed before it. */
const stepExtras = (usage: Usage | undefined, fallbacks: ModelAttempt[] | undefined) => ({
  ...(usage && { usage }),
  ...(fallbacks && { fallbacks }),
});

export const userMessageFact = (key: TurnKey, message: TurnMessage): SessionEvent => ({
  v,
  type: 'userMessage',
  turnId: key.turnId,
  content: message.content,
  ...(message.image && { image: message.image }),
  ...(message.attached && { attached: message.attached }),
  ...(message.clientTools && { clientTools: message.clientTools }),
  ...(message.app && { appCallId: message.app.appCallId }),
});

export const reasoningFact = (key: TurnKey, model: string, r: StepReasoning): SessionEvent => ({
  v,
  type: 'reasoning',
  turnId: key.turnId,
  model,
  ...(r.endpoint && { endpoint: r.endpoint }),
  api: r.api,
  text: r.text,
  ...(r.replay && { replay: r.replay }),
});

export const assistantStepFact = (key: TurnKey, model: string, step: ModelStep): SessionEvent => ({
  v,
  type: 'assistantStep',
  turnId: key.turnId,
  text: step.text,
  toolCalls: step.toolCalls,
  model,
  ...stepExtras(step.usage, step.fallbacks),
});

export const toolCallFact = (
  key: TurnKey,
  { callId, toolName, serverId, args, rerunSafe, appCallId }: PlannedCall,
): SessionEvent => ({
  v,
  type: 'toolCall',
  turnId: key.turnId,
  callId,
  toolName,
  serverId,
  args,
  ...(rerunSafe && { rerunSafe }),
  ...(appCallId !== undefined && { appCallId }),
});

/** The final reply's fact; `text` is what the history keeps as the last assistant message. */
export const responseFact = (
  key: TurnKey,
  reply: { content: string; text: string; model: string } & Pick<LastStep, 'usage' | 'fallbacks'>,
): SessionEvent => ({
  v,
  type: 'response',
  turnId: key.turnId,
  content: reply.content,
  text: reply.text,
  model: reply.model,
  ...stepExtras(reply.usage, reply.fallbacks),
});

export const turnFailedFact = (key: TurnKey, { code, message, details }: ErrorBody): SessionEventOf<'turnFailed'> => ({
  v,
  type: 'turnFailed',
  turnId: key.turnId,
  code,
  message,
  details,
});
