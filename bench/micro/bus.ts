/**
 * One code path alone: the bus (src/bus/bus.ts) as a turn uses it. Around it, 1 000 open sessions each
 * with a session listener (a follower or a WebSocket), three listeners by name (metrics, tracing) and one
 * `onAny` (a WebSocket gateway). A turn subscribes a session listener (the follower of a message-sync),
 * emits eight events of its session over four names, and unsubscribes. Prints ns per turn and per emit,
 * the median of the rounds.
 *
 *   npx tsx bench/micro/bus.ts [<tree> …]   # default: this tree; several: interleaved rounds
 *
 * A <tree> is a checkout's root (e.g. a `git worktree add` of a base revision with node_modules
 * linked), so a change is measured against its parent in one run.
 */
import { resolve } from 'node:path';
import { pino } from 'pino';

interface BusLike {
  on(name: string, listener: (e: unknown) => unknown): () => void;
  onSession(sessionId: string, listener: (e: unknown) => unknown): () => void;
  onAny(listener: (e: unknown) => unknown): () => void;
  emit(name: string, payload: unknown): unknown;
}
type CreateBus = (deps: { log: unknown }) => BusLike;

const ROUNDS = 15;
const TURNS = 20_000;
const EMITS_PER_TURN = 8;
const NAMES = ['agent.turnStarted', 'agent.chunk', 'agent.stored', 'agent.turnEnded'];

let heard = 0;
const listener = () => void heard++;

/** A bus of `root`'s tree with the open sessions' listeners, and a function that runs TURNS turns on it (ms). */
async function turnsOf(root: string): Promise<() => number> {
  const mod = (await import(resolve(root, 'src/bus/bus.ts'))) as { createBus: CreateBus };
  const bus = mod.createBus({ log: pino({ level: 'silent' }) });
  for (let s = 0; s < 1000; s++) bus.onSession(`open-${s}`, listener);
  bus.on('agent.chunk', listener);
  bus.on('agent.stored', listener);
  bus.on('agent.turnEnded', listener);
  bus.onAny(listener);
  return () => {
    const t0 = performance.now();
    for (let turn = 0; turn < TURNS; turn++) {
      const sessionId = `s-${turn % 50}`;
      const off = bus.onSession(sessionId, listener);
      for (let i = 0; i < EMITS_PER_TURN; i++) bus.emit(NAMES[i % NAMES.length]!, { sessionId, turnId: `t${turn}` });
      off();
    }
    return performance.now() - t0;
  };
}

const trees = process.argv.slice(2).length ? process.argv.slice(2) : [resolve(import.meta.dirname, '../..')];
const runs = await Promise.all(trees.map(turnsOf));
for (const run of runs) run(); // warm-up
const ms = trees.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) {
  // Alternate which tree goes first, so drift hits both alike.
  const order = round % 2 ? [...runs.keys()].reverse() : [...runs.keys()];
  for (const i of order) ms[i]!.push(runs[i]!());
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log('| tree | ns/turn (median) | ns/emit | min ns/turn |');
console.log('|---|---|---|---|');
trees.forEach((tree, i) => {
  const perTurn = (median(ms[i]!) * 1e6) / TURNS;
  const min = (Math.min(...ms[i]!) * 1e6) / TURNS;
  console.log(`| ${tree} | ${perTurn.toFixed(0)} | ${(perTurn / EMITS_PER_TURN).toFixed(0)} | ${min.toFixed(0)} |`);
});
if (heard === 0) throw new Error('no listener heard anything');
