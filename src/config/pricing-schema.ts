/** `llm.pricing`: what a model's tokens cost, per million, in a currency (src/llm/pricing.ts prices each step with it). */
import { z } from 'zod';

const perMillion = (what: string) =>
  z.number().nonnegative().finite().describe(`Price of a million ${what}, in \`currency\`.`);

/** One model's prices; the parts a provider reports (cached, cache-write, reasoning) fall back to input or output. */
export const modelPriceSchema = z.strictObject({
  input: perMillion('input tokens (those neither read from nor written to the prompt cache)'),
  cachedInput: perMillion('input tokens read from the prompt cache')
    .optional()
    .describe('Price of a million input tokens read from the prompt cache. Default: `input`.'),
  cacheWrite: perMillion('input tokens written to the prompt cache')
    .optional()
    .describe('Price of a million input tokens written to the prompt cache. Default: `input`.'),
  output: perMillion('output tokens (reasoning excluded when `reasoning` is given)'),
  reasoning: perMillion('reasoning tokens')
    .optional()
    .describe('Price of a million reasoning tokens (part of the output tokens). Default: `output`.'),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code of three capital letters, e.g. USD or EUR')
    .default('USD')
    .describe('The currency of these prices: an ISO 4217 code. Default: `USD`.'),
});
export type ModelPrice = z.output<typeof modelPriceSchema>;

export const pricingSchema = z
  .record(z.string().min(1), modelPriceSchema)
  .default({})
  .describe(
    "Prices per model name (the primary's, each fallback's, the summary model's), per million tokens; they override the bundled table (`@pydantic/genai-prices`, see Models and providers). A cost the provider reports itself (OpenRouter's `usage.cost`) wins over both. A model with neither has usage without cost, and a warning at start names it.",
  );
