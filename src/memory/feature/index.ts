/**
 * Memory as a feature (Feature, src/http/feature-mount.ts; issue 62): with `memory:` in the agent file, the memory
 * service on the sessions' record store, and its port, the agent's way to it (the model's memory tools, the working
 * memory of a turn). Without it the port is undefined (the agent offers no memory tool) and the routes say memory is
 * off.
 */
import { randomUUID } from 'node:crypto';
import type { MemoryPort } from '../../agent/index.ts';
import type { Clock } from '../../clock.ts';
import type { AgentConfig } from '../../config/schema.ts';
import type { Feature } from '../../http/feature-mount.ts';
import type { Logger } from '../../log/index.ts';
import { createMemoryService, memoryStoresOf } from '../index.ts';
import { embedderOf, memoryPort } from './agent-port.ts';
import { memoryMount } from './mount.ts';

export interface MemoryGiven {
  config: Pick<AgentConfig, 'memory' | 'llm'>;
  /** The record store on the sessions' medium: each owner's log, its small kept state and its item records. */
  records: Parameters<typeof memoryStoresOf>[0];
  clock: Clock;
  log: Logger;
  /** Where the embeddings' provider key is looked up (`memory.embeddings`: semantic search). */
  env: NodeJS.ProcessEnv;
}

export const memoryFeature: Feature<'memory', MemoryGiven, MemoryPort | undefined> = {
  name: 'memory',
  build({ config, clock, env, ...given }) {
    if (!config.memory) return { mount: memoryMount({ clock, memory: undefined }) };
    const log = given.log.child({ component: 'memory' });
    // Item (and audit record) ids are unique across instances sharing a Redis, and across restarts.
    const ids = () => randomUUID();
    const service = createMemoryService({
      ...memoryStoresOf(given.records, { log, ids }),
      ...{ log, embedder: embedderOf(config, env), config: config.memory, clock, ids },
    });
    return { mount: memoryMount({ clock, memory: service }), port: memoryPort(service, config.memory, log) };
  },
};
