/**
 * What the memory feature gives the agent (MemoryPort, src/agent/memory-port.ts: the model's memory tools and the
 * working memory of a turn, for each call's principal), and the embeddings it searches with.
 */
import type { MemoryPort } from '../../agent/index.ts';
import type { AgentConfig } from '../../config/schema.ts';
import { proxiedFetch } from '../../egress/proxy.ts';
import { resolveProvider } from '../../llm/providers.ts';
import type { Logger } from '../../log/index.ts';
import { createEmbedder } from '../embeddings.ts';
import { memoryOwnerOf, type MemoryEmbedder, type MemoryService } from '../index.ts';
import { createWorkingMemory } from '../prompt.ts';
import { createMemoryTools, MEMORY_SERVER_ID } from '../tools.ts';

/** The agent's port to memory: the tools of `memory.tools` and the working memory, for each call's principal. */
export function memoryPort(
  service: MemoryService,
  settings: NonNullable<AgentConfig['memory']>,
  log: Logger,
): MemoryPort {
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
