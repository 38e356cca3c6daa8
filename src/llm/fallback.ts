/**
 * The model port of `llm` with its fallback chain (`llm.fallback`): the configured model first,
 * then each fallback in order, for a request the one before could not answer.
 *
 * Contracts:
 * - The next model is tried only when the current one failed with an overload, an outage or a
 *   rate limit past its own retries (FALLBACK_REASONS), before any text of it reached the caller;
 *   never after a rejected key, a refused request, a context overflow (compaction handles that)
 *   or an abort.
 * - The step that answers names its model (`step.model`) and carries the failed attempts before it
 *   (`step.fallbacks`); when every model failed, the last failure is thrown with them in
 *   `details.fallbacks`.
 * - A fallback entry leaves out what the primary has (see fallbackConfig); a request's `model`
 *   (a summary model on the primary's endpoint) goes to the primary only.
 */
import type { LlmConfig, LlmFallbackConfig } from '../config/schema.ts';
import { isAppError } from '../errors/index.ts';
import { createModelClient, type LlmDeps } from './client.ts';
import type { LlmClient, ModelAttempt, ModelRequest } from './types.ts';

/** Failure reasons (failures.ts) after which the next model is tried. */
export const FALLBACK_REASONS: ReadonlySet<unknown> = new Set([
  'rate_limited',
  'provider_error',
  'connection',
  'timeout',
  'model_stalled',
  'incomplete_stream',
]);

/** A fallback entry as a whole model config: what it leaves out is the primary's (see the schema). */
export function fallbackConfig(primary: LlmConfig, entry: LlmFallbackConfig): LlmConfig {
  const { baseURL, apiKey, api, headers, ...shared } = primary;
  const own = entry.provider !== undefined && entry.provider !== primary.provider;
  const connection = own
    ? { headers: {} }
    : {
        headers,
        ...(baseURL !== undefined && { baseURL }),
        ...(apiKey !== undefined && { apiKey }),
        ...(api !== undefined && { api }),
      };
  const config: LlmConfig = {
    ...shared,
    ...connection,
    fallback: [],
    provider: entry.provider ?? primary.provider,
    model: entry.model,
  };
  for (const key of ['apiKey', 'baseURL', 'api', 'stream', 'headers', 'temperature', 'cache', 'reasoning'] as const) {
    if (entry[key] !== undefined) Object.assign(config, { [key]: entry[key] });
  }
  return config;
}

/** The client of `llm` (with its fallbacks); throws AppError('AGENT_ERROR') when a model lacks its key or endpoint. */
export function createLlmClient(llm: LlmConfig, deps: LlmDeps): LlmClient {
  const primary = createModelClient(llm, deps);
  const chain = [
    { client: primary, provider: llm.provider as string },
    ...llm.fallback.map((entry) => {
      const config = fallbackConfig(llm, entry);
      return { client: createModelClient(config, deps), provider: config.provider };
    }),
  ];
  warnUnpriced(chain, llm.compaction.model, deps);
  if (llm.fallback.length === 0) return primary;
  return {
    model: llm.model,
    price: (usage) => primary.price(usage),
    async complete(request: ModelRequest) {
      const fallbacks: ModelAttempt[] = [];
      let streamed = false;
      const { model, ...rest } = request;
      const onText =
        request.onText &&
        ((delta: string) => {
          streamed = true;
          request.onText?.(delta);
        });
      for (const [i, { client, provider }] of chain.entries()) {
        try {
          const step = await client.complete({
            ...rest,
            ...(onText && { onText }),
            ...(i === 0 && model !== undefined && { model }),
          });
          if (fallbacks.length > 0) step.fallbacks = fallbacks;
          return step;
        } catch (e) {
          const last = i === chain.length - 1;
          if (
            !isAppError(e) ||
            last ||
            streamed ||
            request.signal?.aborted ||
            !FALLBACK_REASONS.has(e.details.reason)
          ) {
            if (isAppError(e) && fallbacks.length > 0) e.details.fallbacks = fallbacks;
            throw e;
          }
          fallbacks.push({
            model: client.model,
            provider,
            reason: String(e.details.reason),
            ...(typeof e.details.status === 'number' && { status: e.details.status }),
            message: e.message,
          });
          deps.log.warn(
            { model: client.model, provider, reason: e.details.reason, next: chain[i + 1]?.client.model },
            'model failed; trying the next one (llm.fallback)',
          );
        }
      }
      throw new Error('unreachable: the fallback chain is never empty');
    },
  };
}

/** One warning at start naming the models whose steps get no cost (their usage shows without one). */
function warnUnpriced(
  chain: { client: ReturnType<typeof createModelClient>; provider: string }[],
  summaryModel: string | undefined,
  deps: LlmDeps,
): void {
  const models = chain.filter(({ client }) => !client.priced(client.model)).map(({ client }) => client.model);
  if (summaryModel !== undefined && !chain[0]!.client.priced(summaryModel)) models.push(summaryModel);
  if (models.length > 0)
    deps.log.warn(
      { models: [...new Set(models)] },
      'no price for these models: their usage has no cost (set llm.pricing, see docs/models.md)',
    );
}
