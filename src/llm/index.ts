/** Public face of the model client: the LlmClient port, its API adapters, fallbacks and provider presets. */
export { createModelClient, type LlmDeps, type RequestOutcome } from './client.ts';
export { createLlmClient, fallbackConfig } from './fallback.ts';
export { apiOf, resolveProvider, PROVIDER_PRESETS, type ProviderPreset, type ResolvedProvider } from './providers.ts';
export { MAX_RETRY_WAIT_MS } from './failures.ts';
export type * from './types.ts';
