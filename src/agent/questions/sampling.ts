/**
 * The agent's side of a tool server's sampling (src/tools/mcp/sampling.ts): a {@link Sampler} per tool call.
 * - A request that `needsApproval` is first asked of a person (asked.ts); a denial, or a token budget (budget.ts) the
 *   estimated prompt would pass, refuses it ({@link SamplingRefused}) without asking the model.
 * - The agent's model answers, without tools: the server's `systemPrompt` as system message, then its messages;
 *   `max_tokens` is the request's, capped by `maxOutputTokens` when set; the call's or the request's signal aborts it.
 * - The reply is the model's text; `stopReason` is `endTurn` for `stop`, `maxTokens` for `length`, else the model's
 *   finish reason. What it spent goes to `host.spent`.
 */
import { isAppError } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';
import { SamplingRefused, type Sampler, type SamplingOptions, type SamplingRequest } from '../../tools/messages.ts';
import type { ChatMessage, LlmClient, Usage } from '../../llm/types.ts';
import type { ApprovalDecision } from '../../conversation/records.ts';
import { tokensOf } from '../../conversation/token-estimate.ts';

export interface SamplerDeps {
  llm: LlmClient;
  /** The bound on a sampling request's reply (`llm.maxOutputTokens`). */
  maxOutputTokens: number | undefined;
  log: Logger;
}

/** What a turn's session offers the sampler of one of its calls. */
export interface SamplingHost {
  approve(request: SamplingRequest, options: SamplingOptions): Promise<{ decision: ApprovalDecision; reason?: string }>;
  /** Throws when a request of about `estimate` prompt tokens would pass a token budget. */
  checkBudget(estimate: number): void;
  spent(serverId: string, usage: Usage): void;
}

export interface SamplerTarget {
  sessionId: string;
  turnId: string;
  callId: string;
  signal?: AbortSignal | undefined;
  host: SamplingHost;
}

const STOP_REASONS: Record<string, string> = { stop: 'endTurn', length: 'maxTokens' };

export function createSampler(deps: SamplerDeps, target: SamplerTarget): Sampler {
  return async (request, options) => {
    const messages: ChatMessage[] = [
      ...(request.systemPrompt !== undefined && request.systemPrompt !== ''
        ? [{ role: 'system' as const, content: request.systemPrompt }]
        : []),
      ...request.messages,
    ];
    if (request.needsApproval) {
      const { decision, reason } = await target.host.approve(request, options);
      if (decision === 'deny')
        throw new SamplingRefused(`the user denied the sampling request${reason ? ` (${reason})` : ''}`);
    }
    try {
      target.host.checkBudget(tokensOf(messages.reduce((n, m) => n + m.content.length, 0)));
    } catch (err) {
      if (isAppError(err)) throw new SamplingRefused(err.message);
      throw err;
    }
    const maxTokens =
      deps.maxOutputTokens === undefined ? request.maxTokens : Math.min(request.maxTokens, deps.maxOutputTokens);
    const signal = target.signal ? AbortSignal.any([target.signal, options.signal]) : options.signal;
    const step = await deps.llm.complete({
      messages,
      tools: [],
      maxTokens,
      turnId: target.turnId,
      sessionId: target.sessionId,
      signal,
    });
    const { sessionId, turnId, callId } = target;
    deps.log.info(
      { sessionId, turnId, callId, serverId: request.serverId, usage: step.usage },
      'served a sampling request',
    );
    if (step.usage) target.host.spent(request.serverId, step.usage);
    return { text: step.text, model: deps.llm.model, stopReason: STOP_REASONS[step.finishReason] ?? step.finishReason };
  };
}
