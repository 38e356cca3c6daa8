/**
 * One code path alone: CPU per turn of a session actor (machines/session.machine.ts with the turn
 * machine it invokes, as src/agent/session/actor.ts provides them) whose port answers at once: a
 * one-step reply, its facts "stored" a tick later. No store, model, bus or HTTP: the machines' own
 * per-turn work (xstate macrosteps, the turn actor and what it invokes).
 *
 *   npx tsx bench/micro/session-actor.ts [<tree> …]   # default: this tree; several: interleaved rounds
 *
 * A <tree> is a checkout's root (e.g. a `git worktree add` of a base revision with node_modules
 * linked), so a change is measured against its parent in one run.
 */
import { resolve } from 'node:path';

interface SessionActorLike {
  start(): void;
  send(event: { type: 'MESSAGE'; message: { turnId: string; correlationId: string; content: string } }): void;
  on(type: '*', fn: () => void): void;
  subscribe(fn: (snap: { matches(state: string): boolean; context: { queue: unknown[] } }) => void): void;
}
type CreateSessionActor = (input: Record<string, unknown>, port: Record<string, unknown>) => SessionActorLike;

const ROUNDS = 10;
const TURNS = 2000;

/** A session actor of `root`'s tree, and a function that runs one turn on it. */
async function turnsOf(root: string): Promise<() => Promise<void>> {
  const mod = (await import(resolve(root, 'src/agent/session/actor.ts'))) as { createSessionActor: CreateSessionActor };
  const result = { step: { text: 'hi', toolCalls: [], finishReason: 'stop' }, tools: [], at: 0 };
  let stored = Promise.resolve();
  // Every fact the session reports is "stored" on the next turn of the event loop.
  const report = () => {
    stored = new Promise((done) => setImmediate(done));
  };
  const actor = mod.createSessionActor(
    { sessionId: 's', maxIterations: 20, model: 'm', approvalTimeoutMs: 60_000 },
    {
      modelStep: () => Promise.resolve(result),
      compact: () => Promise.resolve(),
      callTool: () => Promise.reject(new Error('no tools here')),
      settle: () => stored,
      report,
    },
  );
  actor.on('*', report);
  let idle: (() => void) | undefined;
  actor.subscribe((snap) => {
    if (snap.matches('idle') && snap.context.queue.length === 0) idle?.();
  });
  actor.start();
  let n = 0;
  return () => {
    n++;
    const done = new Promise<void>((r) => (idle = r));
    actor.send({ type: 'MESSAGE', message: { turnId: `t${n}`, correlationId: `c${n}`, content: 'hello' } });
    return done;
  };
}

async function cpuPerTurn(turn: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < TURNS; i++) await turn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / TURNS;
}

const roots = process.argv.length > 2 ? process.argv.slice(2) : [resolve(import.meta.dirname, '../..')];
const runs = await Promise.all(roots.map(turnsOf));
for (const run of runs) await cpuPerTurn(run); // warm-up
const samples = roots.map((): number[] => []);
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? [...runs.keys()] : [...runs.keys()].reverse();
  for (const k of order) samples[k]!.push(await cpuPerTurn(runs[k]!));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
roots.forEach((root, k) => {
  const xs = samples[k]!;
  console.log(
    `${root}: ${median(xs).toFixed(1)} µs CPU per turn (median of ${ROUNDS} rounds of ${TURNS}; ${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`,
  );
});
