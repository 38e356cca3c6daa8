/**
 * What one model step cost (`usage.cost`).
 *
 * Contracts:
 * - A cost the provider reported itself (OpenRouter's `usage.cost`: source `provider`) is kept as it is.
 * - Else the model's `llm.pricing` entry (source `config`, in its currency), else the price table bundled with
 *   `@pydantic/genai-prices` (source `table`, USD), looked up by the provider's table id, or for
 *   `openai-compatible` by its base URL; local servers (ollama, vllm, lmstudio) and unknown endpoints have none.
 * - The table is the package's bundled data only: agentd never calls its `updatePrices`, so nothing is fetched. It
 *   is loaded on the first lookup that can match (~15 MB of a process's memory): never for a provider without table
 *   prices, nor for an `openai-compatible` endpoint addressed by an IP literal or a local name (every table entry
 *   names a public host).
 * - Cache tokens are parts of `promptTokens`: the uncached rest is priced at `input`, cache reads at `cachedInput`,
 *   cache writes at `cacheWrite`; reasoning tokens are part of `completionTokens`, priced at `reasoning` when
 *   given (the rest at `output`). Prices are per million tokens.
 * - A model with no price gets no cost (never a guess, never zero).
 */
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type * as GenaiPrices from '@pydantic/genai-prices';
import type { Provider } from '../config/llm-schema.ts';
import type { ModelPrice } from '../config/pricing-schema.ts';
import type { StepCost, Usage } from './types.ts';

/** Our providers' ids in the table (the others have no table prices). */
const TABLE_IDS: Partial<Record<Provider, string>> = {
  openai: 'openai',
  openrouter: 'openrouter',
  groq: 'groq',
  together: 'together',
  deepseek: 'deepseek',
  mistral: 'mistral',
  gemini: 'google',
  anthropic: 'anthropic',
};

/** Providers that report each answer's cost themselves. */
const REPORTS_COST: ReadonlySet<Provider> = new Set(['openrouter']);

/** Drops float noise (0.1 + 0.2): amounts keep 12 decimals, far below any currency's smallest unit. */
const round = (amount: number): number => Math.round(amount * 1e12) / 1e12;

/** The cost of `usage` at `price` (per million tokens), each part of input and output at its own rate. */
export function costAt(price: ModelPrice, usage: Usage): number {
  const cached = usage.cachedTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const input = Math.max(0, usage.promptTokens - cached - written);
  const reasoning = price.reasoning === undefined ? 0 : Math.min(usage.reasoningTokens ?? 0, usage.completionTokens);
  const output = usage.completionTokens - reasoning;
  const sum =
    input * price.input +
    cached * (price.cachedInput ?? price.input) +
    written * (price.cacheWrite ?? price.input) +
    output * price.output +
    reasoning * (price.reasoning ?? price.output);
  return round(sum / 1_000_000);
}

/** How a table lookup finds a model's provider: its id, or the endpoint's URL for `openai-compatible`. */
export type TableKey = { providerId: string } | { providerApiUrl: string } | undefined;

export function tableKeyOf(provider: Provider, baseURL: string): TableKey {
  const providerId = TABLE_IDS[provider];
  if (providerId) return { providerId };
  return provider === 'openai-compatible' && publicHost(baseURL) ? { providerApiUrl: baseURL } : undefined;
}

/** Whether `url` names a host by a public DNS name (not an IP literal, `localhost` or a `.local`/`.internal` name). */
function publicHost(url: string): boolean {
  const host = URL.parse(url)?.hostname.replace(/^\[|\]$/g, '');
  return !!host && host.includes('.') && !isIP(host) && !/(^|\.)(localhost|local|internal|lan)$/i.test(host);
}

type PriceTable = typeof GenaiPrices;

/** Reads the price table (the package's CommonJS build, synchronously): called only for a lookup that can match. */
const loadTable = (): PriceTable => createRequire(import.meta.url)('@pydantic/genai-prices') as PriceTable;

/** The table's cost of `usage` on `model` (USD), or undefined when the table has no price for it. */
export function tableCost(model: string, usage: Usage, key: TableKey, table = loadTable): number | undefined {
  if (!key) return undefined;
  try {
    const found = table().calcPrice(
      {
        input_tokens: usage.promptTokens,
        cache_read_tokens: usage.cachedTokens ?? 0,
        cache_write_tokens: usage.cacheWriteTokens ?? 0,
        output_tokens: usage.completionTokens,
      },
      model,
      key,
    );
    return found ? round(found.total_price) : undefined;
  } catch {
    return undefined; // a usage the table refuses (e.g. cache figures above the input) is left unpriced
  }
}

export interface Pricer {
  /** The cost of a step of `model`: the provider's own when `usage` has one, else config's, else the table's. */
  cost: (model: string, usage: Usage) => StepCost | undefined;
  /** Whether steps of `model` get a cost (priced by config or the table, or by a provider that reports costs). */
  priced: (model: string) => boolean;
}

/**
 * The pricer of one endpoint: `pricing` is `llm.pricing`, `provider` and `baseURL` the endpoint's; `table` reads the
 * price table (default: the package's), called once, by the first lookup that can match.
 */
export function createPricer(
  pricing: Record<string, ModelPrice>,
  provider: Provider,
  baseURL: string,
  table: () => PriceTable = loadTable,
): Pricer {
  const key = tableKeyOf(provider, baseURL);
  let loaded: PriceTable | undefined;
  const read = () => (loaded ??= table());
  const own = (model: string): ModelPrice | undefined => (Object.hasOwn(pricing, model) ? pricing[model] : undefined);
  return {
    cost(model, usage) {
      if (usage.cost) return usage.cost;
      const price = own(model);
      if (price) return { amount: costAt(price, usage), currency: price.currency, source: 'config' };
      const amount = tableCost(model, usage, key, read);
      return amount === undefined ? undefined : { amount, currency: 'USD', source: 'table' };
    },
    priced: (model) =>
      REPORTS_COST.has(provider) ||
      own(model) !== undefined ||
      tableCost(model, { promptTokens: 1, completionTokens: 1, totalTokens: 2 }, key, read) !== undefined,
  };
}
