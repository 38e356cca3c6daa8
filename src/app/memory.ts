/**
 * createApp's memory (issue 62): the memory service on the sessions' medium when `memory:` is in the agent file, and
 * the agent's port to it (MemoryPort: the model's memory tools, the working memory of a turn); undefined when it is
 * not (memory off: the routes say so, the agent offers no memory tool).
 */
import { randomUUID } from 'node:crypto';
import type { MemoryPort } from '../agent/index.ts';
import type { Clock } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import {
  createMemoryService,
  memoryOwnerOf,
  memoryStoresOf,
  type MemoryEmbedder,
  type MemoryService,
} from '../memory/index.ts';
import { createEmbedder } from '../memory/embeddings.ts';
import { createWorkingMemory } from '../memory/prompt.ts';
import { createMemoryTools, MEMORY_SERVER_ID } from '../memory/tools.ts';
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
): { service: MemoryService; port: MemoryPort } | undefined {
  if (!config.memory) return undefined;
  const log = deps.log.child({ component: 'memory' });
  // Item (and audit record) ids are unique across instances sharing a Redis, and across restarts.
  const ids = () => randomUUID();
  const service = createMemoryService({
    ...memoryStoresOf(deps.records, { log, ids }),
    log,
    embedder: deps.embedder,
    config: config.memory,
    clock: deps.clock,
    ids,
  });
  return { service, port: memoryPort(service, config.memory, log) };
}

/** The agent's port to memory: the tools of `memory.tools` and the working memory, for each call's principal. */
function memoryPort(service: MemoryService, settings: NonNullable<AgentConfig['memory']>, log: Logger): MemoryPort {
  const tools = createMemoryTools(service, settings, log);
  const workingMemory = createWorkingMemory(service, log);
  return {
    tools: tools.definitions.map(({ rerunSafe, ...d }) => ({
      ...d,
      serverId: MEMORY_SERVER_ID,
      toolName: d.name,
      ...(rerunSafe && { rerunSafe: true as const }),
    })),
    ownWords: tools.ownWords,
    call: (name, args, { owner, ...origin }) => tools.call(name, args, { ...origin, owner: memoryOwnerOf(owner) }),
    workingMemory: (owner) => workingMemory(memoryOwnerOf(owner)),
  };
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
