/** Public face of the model client: the LlmClient port, its openai adapter and provider presets. */
export { createLlmClient, type LlmDeps, type RequestOutcome } from './client.ts';
export { resolveProvider, PROVIDER_PRESETS, type ProviderPreset, type ResolvedProvider } from './providers.ts';
export { MAX_RETRY_WAIT_MS } from './failures.ts';
export type * from './types.ts';
