/** Public face of the model client: the LlmClient port, its API adapters, fallbacks and provider presets. */
export type { LlmDeps, RequestOutcome } from './client.ts';
export { createLlmClient, fallbackConfig } from './fallback.ts';
export type { ProviderPreset, ResolvedProvider } from './providers.ts';
export type * from './types.ts';
