/**
 * The LlmClient port for one model: the request loop (deadline, retries, bounds, abort) around
 * the adapter of its API (adapter.ts: chat, responses or messages). Every API's request goes out
 * through lean-request.ts (its failures: api-error.ts), its stream read by the lean SSE reader (sse.ts); no
 * provider SDK is loaded: the three wires need no more (docs/models.md).
 *
 * Contracts:
 * - `llm.timeoutMs` is one deadline for the whole `complete()` call: connecting, every retry and
 *   its wait, and the entire stream. A stall past it ends in AGENT_ERROR "... timed out ...".
 * - Retries (at most `llm.maxRetries`) happen only for answers that fail before any text reached
 *   `onText` (408/409/429/5xx and 529, an overload reported at the start of a stream, lost
 *   connections, a stream that ended before its answer did). The wait honours `retry-after-ms` / `Retry-After`, is capped at
 *   MAX_RETRY_WAIT_MS, ends early on abort, and is skipped (failing at once) when it would
 *   outlast the deadline.
 * - Aborting `signal` rejects with a DOMException named 'AbortError'; every other failure is
 *   AppError('AGENT_ERROR') (see failures.ts); an exception from `onText` rejects as itself.
 * - `llm.stream: false`: one request, the whole reply; `onText` gets its text once.
 * - Only a whole answer is a step (one attempt and its answer: attempt.ts): a stream the folder finds
 *   `unfinished` (adapter.ts) fails as `incomplete_stream`, and an answer neither SSE nor JSON (answerKind) as
 *   `not_a_model_answer`.
 * - A step names the model that answered; its reasoning also the endpoint (endpointOf the base
 *   URL), so it goes back to that model only (adapter.ts, replayFor).
 * - `llm.maxEventBytes` bounds one stream event and a whole unstreamed reply (`event_too_large`); a malformed
 *   answer, a 204 to a streaming request included, fails as `bad_response`, never as "could not reach".
 * - Requests go through `llm.proxy`, else the environment's proxy (src/egress/proxy.ts), else straight.
 * - The API key goes only into the request headers; it is never logged nor put in errors. `llm.headers` go
 *   with every request.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock } from '../clock.ts';
import { randomUUID } from 'node:crypto';
import { createLeanRequest, requestHead } from './lean-request.ts';
import { createHttp1Pool } from './http1-client/index.ts';
import { proxyFor } from '../egress/proxy.ts';
import type { LlmConfig } from '../config/schema.ts';
import { TextCallbackError, type Adapter } from './adapter.ts';
import { abortError, createAttempt } from './attempt.ts';
import type { Logger } from '../log/index.ts';
import {
  contentFilterFailure,
  endpointOf,
  isRetryable,
  retryDelayMs,
  stalledFailure,
  statusOf,
  timeoutFailure,
  tooLongFailure,
  toAgentError,
  type RequestFacts,
} from './failures.ts';
import { isAppError } from '../errors/index.ts';
import { chatAdapter } from './chat-adapter.ts';
import { messagesAdapter } from './messages-adapter.ts';
import { apiOf, contextLimitsOf, resolveProvider } from './providers.ts';
import { createPricer } from './pricing.ts';
import { responsesAdapter } from './responses-adapter.ts';
import type { LlmClient, ModelRequest, ModelStep, StepCost, Usage } from './types.ts';

/** How one model request ended; `model` is the model asked (the one that answered, when ok). */
export interface RequestOutcome {
  ok: boolean;
  retries: number;
  model: string;
  usage?: Usage | undefined;
  error?: string | undefined;
}

/** Whom a model request is for: its turn and session (the session key names the principal). */
export interface RequestFor {
  turnId?: string | undefined;
  sessionId?: string | undefined;
}

export interface LlmDeps {
  log: Logger;
  /** Where provider keys are looked up (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Reads `Retry-After` dates (default the system clock). */
  clock?: Clock;
  /** Retry jitter, uniform in [0, 1) (default Math.random). */
  random?: () => number;
  /** Told when each model request starts; the returned function when it ends (after its retries). For metrics and traces. */
  observe?: (request: RequestFor) => (outcome: RequestOutcome) => void;
}

/** The adapter of each API; a model's is `llm.api`, else its provider's default (apiOf). */
const ADAPTERS = { chat: chatAdapter, responses: responsesAdapter, messages: messagesAdapter } as const;

/** A model's client that says what its steps cost. */
export type PricedClient = LlmClient & { priced(model: string): boolean; price(usage: Usage): StepCost | undefined };

/** One model's client; throws AppError('AGENT_ERROR') when the provider lacks its key or endpoint. */
export function createModelClient(llm: LlmConfig, deps: LlmDeps): PricedClient {
  const { log } = deps;
  const now = () => (deps.clock ?? systemClock).now();
  const random = deps.random ?? Math.random;
  const resolved = resolveProvider(llm, deps.env ?? process.env);
  const facts: RequestFacts = {
    provider: resolved.provider,
    model: llm.model,
    baseURL: resolved.baseURL,
    // A placeholder ('ollama', ...) is no secret, and scrubbing it would mangle provider messages.
    apiKey: resolved.keySource === 'placeholder' ? '' : resolved.apiKey,
    timeoutMs: llm.timeoutMs,
  };
  const endpoint = endpointOf(resolved.baseURL);
  const adapter: Adapter = ADAPTERS[apiOf(llm)]({
    stream: llm.stream,
    temperature: llm.temperature,
    cache: llm.cache ?? true,
    reasoning: llm.reasoning,
    maxOutputTokens: contextLimitsOf(llm).maxOutputTokens,
    apiKey: resolved.apiKey,
    endpoint,
  });
  const newId = () => `call_${randomUUID()}`;
  const head = requestHead(resolved.baseURL, resolved.apiKey, adapter, llm.headers);
  const proxy = proxyFor(head.url, llm.proxy, deps.env ?? process.env);
  const post = createLeanRequest(head, createHttp1Pool(proxy && { proxy }));

  const attempt = createAttempt({ post, adapter, maxEventBytes: llm.maxEventBytes, newId });
  const pricer = createPricer(llm.pricing, resolved.provider, resolved.baseURL);

  return {
    model: llm.model,
    priced: pricer.priced,
    price: (usage) => pricer.cost(llm.model, usage),
    async complete(request: ModelRequest): Promise<ModelStep> {
      const callerSignal = request.signal;
      if (callerSignal?.aborted) throw abortError();
      const model = request.model ?? llm.model;
      const body = adapter.encode({ ...request, model });
      // A retry after text reached the caller would repeat it: only failures before any text are retried.
      let streamed = false;
      const onText =
        request.onText &&
        ((delta: string) => {
          streamed = true;
          request.onText?.(delta);
        });

      const told = deps.observe?.({ turnId: request.turnId, sessionId: request.sessionId });
      const observed = told && ((outcome: Omit<RequestOutcome, 'model'>) => told({ ...outcome, model }));
      const controller = new AbortController();
      let ended: 'aborted' | 'timed out' | 'stalled' | 'too long' | undefined;
      const stop = (why: NonNullable<typeof ended>): void => {
        ended ??= why;
        controller.abort();
      };
      const onCallerAbort = (): void => stop('aborted');
      // Bounds on what the model can make us hold: time between stream events, and reply length.
      // One idle timer per streamed attempt, pushed back on every event (refresh: no allocation per
      // chunk); a whole (unstreamed) answer has no events to wait between, only the deadline.
      let idle: NodeJS.Timeout | undefined;
      const watch = (size: number): void => {
        if (idle) idle.refresh();
        else if (adapter.stream) idle = setTimeout(() => stop('stalled'), llm.idleTimeoutMs);
        if (size > llm.maxReplyChars) stop('too long');
      };
      const stopWatching = (): void => {
        clearTimeout(idle);
        idle = undefined;
      };
      callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
      const deadline = performance.now() + llm.timeoutMs;
      const timer = setTimeout(() => stop('timed out'), llm.timeoutMs);
      try {
        for (let retries = 0; ; retries++) {
          try {
            watch(0);
            const step = await attempt(body, controller.signal, onText, watch);
            const cost = step.usage && pricer.cost(model, step.usage);
            if (cost) step.usage!.cost = cost;
            // A reply the content filter withheld whole is a failure the user is told about, not an empty answer.
            if (step.finishReason === 'content_filter' && step.text === '' && step.toolCalls.length === 0) {
              observed?.({ ok: false, retries, usage: step.usage, error: 'content_filter' });
              throw contentFilterFailure(facts);
            }
            observed?.({ ok: true, retries, usage: step.usage });
            step.model = model;
            if (step.reasoning) Object.assign(step.reasoning, { model, endpoint });
            return step;
          } catch (e) {
            stopWatching();
            if (isAppError(e)) throw e;
            const retryable = !streamed && isRetryable(e);
            if (ended !== undefined || e instanceof TextCallbackError || retries >= llm.maxRetries || !retryable) {
              observed?.({ ok: false, retries, error: ended ?? statusOf(e)?.toString() ?? 'failed' });
            }
            if (ended === 'aborted') throw abortError();
            if (ended === 'timed out') throw timeoutFailure(facts);
            if (ended === 'stalled') throw stalledFailure(facts, llm.idleTimeoutMs);
            if (ended === 'too long') throw tooLongFailure(facts, llm.maxReplyChars);
            if (e instanceof TextCallbackError) throw e.inner;
            if (retries >= llm.maxRetries || !retryable) throw toAgentError(e, facts, retries);
            const delay = retryDelayMs(e, retries, random, now);
            if (performance.now() + delay >= deadline) throw toAgentError(e, facts, retries);
            log.warn(
              {
                provider: facts.provider,
                model: facts.model,
                status: statusOf(e),
                retry: retries + 1,
                waitMs: Math.round(delay),
              },
              'model request failed; retrying',
            );
            await sleep(delay, undefined, { signal: controller.signal }).catch(() => undefined); // ends at an abort
            if (ended === 'aborted') throw abortError();
            if (ended === 'timed out') throw timeoutFailure(facts);
          }
        }
      } finally {
        clearTimeout(timer);
        stopWatching();
        callerSignal?.removeEventListener('abort', onCallerAbort);
      }
    },
  };
}
