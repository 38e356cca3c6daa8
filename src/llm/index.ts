/** Public face of the model client: the LlmClient (types.ts) of `llm` with its fallbacks. */
export type { LlmDeps, RequestFor, RequestOutcome } from './client.ts';
export { createLlmClient, fallbackConfig } from './fallback.ts';
