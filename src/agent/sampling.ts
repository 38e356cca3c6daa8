/**
 * The agent's side of a tool server's sampling (src/tools/sampling.ts): a {@link Sampler} per tool call
 * of a turn, answered by the agent's own model client.
 *
 * Contracts:
 * - The request goes to the same model and endpoint as the agent's turns, without tools: the server's
 *   `systemPrompt` (if any) as the system message, then its messages; `max_tokens` is the request's
 *   (already capped by `samplingMaxTokens`) capped again by `maxOutputTokens` when the config sets it.
 * - The reply is the model's text; `stopReason` is `endTurn` for `stop`, `maxTokens` for `length`,
 *   otherwise the model's finish reason. The call's abort signal aborts the model request.
 * - The model's usage is passed to `onUsage` (logged; not yet folded into the session's totals).
 */
import type { Logger } from '../log/index.ts';
import type { Sampler } from '../tools/messages.ts';
import type { ChatMessage, LlmClient, Usage } from '../llm/types.ts';

export interface SamplerDeps {
  llm: LlmClient;
  maxOutputTokens: number | undefined;
  log: Logger;
}

export interface SamplerTarget {
  sessionId: string;
  turnId: string;
  callId: string;
  signal?: AbortSignal | undefined;
  onUsage?: (usage: Usage, serverId: string) => void;
}

const STOP_REASONS: Record<string, string> = { stop: 'endTurn', length: 'maxTokens' };

export function createSampler(deps: SamplerDeps, target: SamplerTarget): Sampler {
  return async (request) => {
    const messages: ChatMessage[] = [
      ...(request.systemPrompt !== undefined && request.systemPrompt !== '' ? [{ role: 'system' as const, content: request.systemPrompt }] : []),
      ...request.messages,
    ];
    const maxTokens = deps.maxOutputTokens === undefined ? request.maxTokens : Math.min(request.maxTokens, deps.maxOutputTokens);
    const step = await deps.llm.complete({ messages, tools: [], maxTokens, turnId: target.turnId, ...(target.signal && { signal: target.signal }) });
    deps.log.info({ sessionId: target.sessionId, turnId: target.turnId, callId: target.callId, serverId: request.serverId, usage: step.usage }, 'served a sampling request');
    if (step.usage) target.onUsage?.(step.usage, request.serverId);
    return { text: step.text, model: deps.llm.model, stopReason: STOP_REASONS[step.finishReason] ?? step.finishReason };
  };
}
