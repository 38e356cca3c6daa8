/**
 * createApp's memory (issue 62): the memory service on the sessions' medium when `memory:` is in the agent file,
 * undefined when it is not (memory off: the routes say so, the agent offers no memory tool).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import { createMemoryService, memoryStoresOf, type MemoryEmbedder, type MemoryService } from '../memory/index.ts';
import { createEmbedder } from '../memory/embeddings.ts';
import { resolveProvider } from '../llm/providers.ts';
import { proxiedFetch } from '../egress/proxy.ts';

export function memoryOf(
  config: Pick<AgentConfig, 'memory'>,
  deps: {
    log: Logger;
    clock: Clock;
    /** The record store on the sessions' medium: each owner's log, its small kept state and its item records. */
    records: Parameters<typeof memoryStoresOf>[0];
    /** Semantic search, when `memory.embeddings` is set (the provider's embeddings API). */
    embedder?: MemoryEmbedder | undefined;
  },
): MemoryService | undefined {
  if (!config.memory) return undefined;
  const log = deps.log.child({ component: 'memory' });
  // Item (and audit record) ids are unique across instances sharing a Redis, and across restarts.
  const ids = () => randomUUID();
  return createMemoryService({
    ...memoryStoresOf(deps.records, { log, ids }),
    log,
    embedder: deps.embedder,
    config: config.memory,
    clock: deps.clock,
    ids,
  });
}

/** The longest an embeddings request may take (a save or search waits for it, then goes on by full text). */
const EMBEDDINGS_TIMEOUT_MS = 10_000;

/** With `memory.embeddings`: the llm provider's embeddings API (its endpoint, key and proxy), else undefined. */
export function embedderOf(
  config: Pick<AgentConfig, 'memory' | 'llm'>,
  env: NodeJS.ProcessEnv,
): MemoryEmbedder | undefined {
  const model = config.memory?.embeddings?.model;
  if (model === undefined) return undefined;
  return createEmbedder({
    ...resolveProvider(config.llm, env),
    model,
    timeoutMs: Math.min(config.llm.timeoutMs, EMBEDDINGS_TIMEOUT_MS),
    fetch: proxiedFetch((url, init) => fetch(url, init), config.llm.proxy, env),
  });
}
