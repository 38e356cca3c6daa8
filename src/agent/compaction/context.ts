/**
 * A session's context accounting: how many tokens its next request will take, and when to compact.
 * - The estimate is the provider's `prompt_tokens` of the last request on the same projection (no reset or compaction
 *   since) plus characters/4 of what was added since; without one, characters/4 of it all (token-estimate.ts: why).
 * - The window is `llm.contextWindow`, else the model table's (src/llm/providers.ts), else one an overflow answer
 *   named, learned per session (never shrinking another's); with none, only an overflow answer triggers compaction.
 * - `usage` totals the session's model steps, summaries and servers' sampling (`serverSampled`) included; an event's
 *   `usageTotal` sets it, so a session read from its latest compaction on knows its totals.
 */
import type { SessionEvent } from '../../conversation/session-events.ts';
import { tokensOf } from '../../conversation/token-estimate.ts';
import type { LlmConfig } from '../../config/schema.ts';
import { contextLimitsOf } from '../../llm/providers.ts';
import type { ChatMessage, Usage } from '../../llm/types.ts';
import { DEFAULT_COMPACTION_PROMPT } from './compaction.ts';

/** One session's settings. */
export function contextSettings(llm: Pick<LlmConfig, 'model' | 'contextWindow' | 'maxOutputTokens' | 'compaction'>) {
  const limits = contextLimitsOf(llm);
  let learned: number | undefined;
  return {
    threshold: llm.compaction.threshold,
    keepTurns: llm.compaction.keepTurns,
    prompt: llm.compaction.prompt ?? DEFAULT_COMPACTION_PROMPT,
    /** The summary request's model (default: the session's). */
    model: llm.compaction.model,
    get maxOutputTokens() {
      const window = limits.contextWindow ?? learned;
      return window === undefined ? limits.maxOutputTokens : Math.min(limits.maxOutputTokens, Math.floor(window / 4));
    },
    window: () => limits.contextWindow ?? learned,
    /** Remembers a window a provider named in an overflow answer (when none was known). */
    learn(window: number): void {
      if (limits.contextWindow === undefined && window > 0) learned = window;
    },
  };
}
export type ContextSettings = ReturnType<typeof contextSettings>;

export function createContextMeter() {
  let last: { list: readonly ChatMessage[]; chars: number; promptTokens: number } | undefined;
  return {
    /** Estimated tokens of a request of `chars` characters whose history view is `list`. */
    estimate(list: readonly ChatMessage[], chars: number): number {
      if (last && last.list === list) return last.promptTokens + tokensOf(Math.max(0, chars - last.chars));
      return tokensOf(chars);
    },
    /** A request of `chars` characters on `list` was answered with `usage`. */
    observe(list: readonly ChatMessage[], chars: number, usage: Usage | undefined): void {
      last = usage && usage.promptTokens > 0 ? { list, chars, promptTokens: usage.promptTokens } : undefined;
    },
  };
}
export type ContextMeter = ReturnType<typeof createContextMeter>;

const OPTIONAL_COUNTS = ['cachedTokens', 'cacheWriteTokens', 'reasoningTokens'] as const;

/** `a`'s costs per currency with `b`'s (its step `cost` and its totals `costs`) added; undefined when neither has any. */
function addCosts(a: Usage, b: Usage): Usage['costs'] {
  const parts = [...(a.costs ?? []), ...(b.costs ?? []), ...(b.cost ? [b.cost] : [])];
  if (parts.length === 0) return undefined;
  const sums = new Map<string, number>();
  for (const { amount, currency } of parts) sums.set(currency, (sums.get(currency) ?? 0) + amount);
  return [...sums].map(([currency, amount]) => ({ amount: Math.round(amount * 1e12) / 1e12, currency }));
}

/** `a` plus `b` as totals: every figure, the optional ones only when either has them, costs summed per currency. */
function addUsage(a: Usage, b: Usage | undefined): Usage {
  const sum: Usage = {
    promptTokens: a.promptTokens + (b?.promptTokens ?? 0),
    completionTokens: a.completionTokens + (b?.completionTokens ?? 0),
    totalTokens: a.totalTokens + (b?.totalTokens ?? 0),
  };
  for (const key of OPTIONAL_COUNTS)
    if (a[key] !== undefined || b?.[key] !== undefined) sum[key] = (a[key] ?? 0) + (b?.[key] ?? 0);
  const costs = addCosts(a, b ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  if (costs) sum.costs = costs;
  return sum;
}

/** Folds one event into a session's usage totals, in place. */
export function applyUsage(total: Usage, e: SessionEvent): void {
  const next =
    e.type === 'contextCompacted'
      ? e.usageTotal
      : e.type === 'serverSampled'
        ? addUsage(total, e.usage)
        : e.type === 'assistantStep' || e.type === 'response'
          ? (e.usageTotal ?? addUsage(total, e.usage))
          : undefined;
  if (!next) return;
  for (const key of OPTIONAL_COUNTS) delete total[key];
  delete total.costs;
  delete total.cost;
  Object.assign(total, next);
}

/**
 * A session's usage as its model steps see it: the totals now, and with a step's own usage added. `now()` gives
 * totals that include what is still being written (src/agent/session/state.ts `usageWith`).
 */
export function usageView(now: () => Usage) {
  return {
    current: now,
    /** The totals with `extra` added, as a new object. */
    with: (extra: Usage | undefined): Usage => addUsage(now(), extra),
  };
}
export type UsageView = ReturnType<typeof usageView>;
