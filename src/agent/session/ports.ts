/**
 * The session ports: what the actors of the one shared session machine definition need of their session (its model
 * step, its tool caller, the wait for its facts to be stored), found by the actor system they run in.
 * - `bindPort` runs once per session actor, before it starts; `portOf` throws for a system without a port (a bug).
 * - Why: providing the actors per session built both machine definitions each time (~23 KB of heap and ~0.3 ms per
 *   session, measured); passing the port through the machines' input would put functions into their context (which
 *   the inspector shows). Keyed weakly by the actor system, an entry goes with its session: nothing is removed by
 *   hand. This is the agent's only module-level state, holding no data of its own.
 */
import type {
  CompactInput,
  ModelStepInput,
  ModelStepResult,
  ToolCaller,
  TurnReport,
} from '../../conversation/turn-contract.ts';
import type { ActorSystemOf } from '../../../machines/turn.machine.ts';

/** What the shared machine definition's actors need of one session. */
export interface SessionPort {
  modelStep: (input: ModelStepInput, signal: AbortSignal) => Promise<ModelStepResult>;
  /** Compacts the session's history (stores `contextCompacted`); rejects when it could not (the history is left as it was). */
  compact: (input: CompactInput, signal: AbortSignal) => Promise<void>;
  callTool: ToolCaller;
  /** What the running turn reports (its facts, thinking, machine-made chunks), in order. */
  report: (r: TurnReport) => void;
  /** Calls `settled` once the session's facts handed in so far are stored (or failed): at once when none wait. */
  settle: (settled: () => void) => void;
}

const ports = new WeakMap<ActorSystemOf, SessionPort>();

export function bindPort(system: ActorSystemOf, port: SessionPort): void {
  ports.set(system, port);
}

export function portOf(system: ActorSystemOf): SessionPort {
  const port = ports.get(system);
  if (!port) throw new Error('session actor started without its port');
  return port;
}
