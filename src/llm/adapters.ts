/** Picks the adapter of a model's API: `llm.api`, else its provider's default (providers.ts). */
import type { LlmConfig } from '../config/schema.ts';
import type { Adapter, AdapterOptions } from './adapter.ts';
import { chatAdapter } from './chat-adapter.ts';
import { messagesAdapter } from './messages-adapter.ts';
import { apiOf } from './providers.ts';
import { responsesAdapter } from './responses-adapter.ts';

const ADAPTERS = { chat: chatAdapter, responses: responsesAdapter, messages: messagesAdapter } as const;

export function adapterFor(llm: Pick<LlmConfig, 'provider' | 'api'>, options: AdapterOptions): Adapter {
  return ADAPTERS[apiOf(llm)](options);
}
