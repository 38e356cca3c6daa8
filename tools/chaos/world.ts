/**
 * What the parts of a chaos run share while it runs: the instances, the run's PRNG, the receivers, and the notes the
 * load keeps of what agentd acknowledged (the checker's `acked`, `a2aTasks`, `mcpTasks`), counted operations and faults.
 */
import type { Instance } from './instances.ts';
import type { Prng } from './prng.ts';
import type { A2aTask, AckedMessage, McpTask } from './recorded.ts';

/** The faults every run injects. */
export const BASE_FAULT_KINDS = ['kill', 'pause', 'redisRestart', 'slowModel'] as const;
/** The faults that lose acknowledged writes (Redis without its data, a failover to a lagging replica): `--lossy`. */
export const LOSSY_FAULT_KINDS = ['redisWipe', 'failover'] as const;
export const FAULT_KINDS = [...BASE_FAULT_KINDS, ...LOSSY_FAULT_KINDS] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type LossyFaultKind = (typeof LOSSY_FAULT_KINDS)[number];

/** A lossy fault as it began (ms since the epoch): the checker tells what each lost. */
export interface LossyFault {
  kind: LossyFaultKind;
  at: number;
}

export interface World {
  seed: number;
  instances: Instance[];
  prng: Prng;
  pushUrl: string;
  acked: AckedMessage[];
  a2aTasks: A2aTask[];
  /** MCP tasks created (`<session key>/<turnId>`), read back with `tasks/get` once the run settled. */
  mcpTasks: Pick<McpTask, 'taskId' | 'sessionId' | 'turnId'>[];
  /** Operations the load made, by kind (a message sent, an approval answered, a drop, ...). */
  operations: Record<string, number>;
  faults: Record<FaultKind, number>;
  /** The kinds this run injects (BASE_FAULT_KINDS, and LOSSY_FAULT_KINDS with `--lossy`). */
  faultKinds: readonly FaultKind[];
  lossyFaults: LossyFault[];
  /** Each `message-sync` answered: when it was sent and answered (ms since the epoch), and its status. */
  syncs: { sessionId: string; turnId: string; sentAt: number; answeredAt: number; status: number }[];
}

/** The base URL (or WebSocket URL) of an instance that is up, chosen with `prng` (undefined when none is). */
export function upInstance(world: World, prng: Prng, kind: 'http' | 'ws' = 'http'): string | undefined {
  const up = world.instances.filter((i) => i.state === 'up');
  if (up.length === 0) return undefined;
  const chosen = prng.pick(up);
  return kind === 'ws' ? chosen.wsUrl : chosen.url;
}

export function countOperation(world: World, kind: string): void {
  world.operations[kind] = (world.operations[kind] ?? 0) + 1;
}

export const totalOperations = (world: World): number => Object.values(world.operations).reduce((sum, n) => sum + n, 0);
