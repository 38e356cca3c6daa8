/**
 * createApp's memory (issue 62): the memory service on the sessions' medium when `memory:` is in the agent file,
 * undefined when it is not (memory off: the routes say so, the agent offers no memory tool). With
 * `memory.embeddings`, its semantic search asks the llm provider's embeddings API (llm.baseURL and key, llm.proxy).
 */
import { randomUUID } from 'node:crypto';
import { isoNow, type Clock } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import { resolveProvider } from '../llm/providers.ts';
import type { Logger } from '../log/index.ts';
import { createMemoryService, memoryStoresOf, type MemoryService } from '../memory/index.ts';
import { createEmbedder, createSemanticSearch } from '../memory/embeddings.ts';
import { proxiedFetch } from '../proxy.ts';

/** The longest an embeddings request may take (a save or search waits for it, then goes on without). */
const EMBEDDINGS_TIMEOUT_MS = 10_000;

export function memoryOf(
  config: Pick<AgentConfig, 'memory' | 'storage' | 'llm'>,
  deps: { log: Logger; clock: Clock; redis: Parameters<typeof memoryStoresOf>[2]; env: NodeJS.ProcessEnv },
): MemoryService | undefined {
  if (!config.memory) return undefined;
  const log = deps.log.child({ component: 'memory' });
  // On Redis: the cluster's connection (connected once the app is open, before anything reads memory).
  const stores = memoryStoresOf(config.storage, log, deps.redis);
  const model = config.memory.embeddings?.model;
  const semantic =
    model === undefined
      ? undefined
      : createSemanticSearch({
          embed: createEmbedder({
            ...resolveProvider(config.llm, deps.env),
            model,
            timeoutMs: Math.min(config.llm.timeoutMs, EMBEDDINGS_TIMEOUT_MS),
            fetch: proxiedFetch((url, init) => fetch(url, init), config.llm.proxy, deps.env),
          }),
          model,
          log,
          append: (owner, events) => stores.store.append(owner, events),
          now: () => isoNow(deps.clock),
        });
  return createMemoryService({
    ...stores,
    config: config.memory,
    clock: deps.clock,
    // Item ids are unique across instances sharing a Redis, and across restarts.
    ids: () => randomUUID(),
    semantic,
  });
}
