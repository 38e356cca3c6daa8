/**
 * The chaos run's fault injector: until `stop()`, a fault every 1.5–7.5 s (about 130 in 600 s), its kind and its
 * target and durations drawn from the PRNG:
 * - `kill`: SIGKILL an instance, restart it 0.5–3 s later (same port, same agent file);
 * - `pause`: SIGSTOP an instance for more than the lease (lease + 0.3–2.5 s), then SIGCONT;
 * - `redisRestart`: SIGKILL redis-server, start it again 0.3–2 s later on the same port and folder (AOF);
 * - `slowModel`: every model request waits 1–5 s before it reaches the simulator, for 3–10 s;
 * - with `--lossy` (redis-pair.ts), `redisWipe`: the primary restarted without its data 0.3–2 s later, and `failover`:
 *   the replica made to lag for 0.5–2 s, then promoted and the instances moved to it. Each is noted with its time
 *   (`world.lossyFaults`: the wipe's crash, the failover's promotion), as what it loses is expected: the checker asks whether agentd noticed.
 * Every kind comes once before any comes twice (nextFault): the first faults, within 30 s (45 s with `--lossy`), are
 * the run's kinds in a seeded order, so every run of at least 60 s injects each kind; then kinds are drawn by
 * FAULT_WEIGHTS.
 * Faults overlap, but one instance is always left up (never killed or paused), one Redis restart and one slow model
 * at a time (Redis restarts, wipes and failovers one at a time): a fault whose target is not available is skipped (not counted; a kind never injected comes again next). A killed instance that fails to start
 * (Redis away at that moment) is started again, up to 5 times. `stop()` waits for the faults in progress to end
 * (every instance up, Redis up, the model fast again).
 */
import { LEASE_MS } from './agent-file.ts';
import type { Instance } from './instances.ts';
import type { Prng } from './prng.ts';
import type { RedisPair } from './redis-pair.ts';
import type { ChaosRedis } from './redis-server.ts';
import type { SlowModel } from './slow-model.ts';
import { journal } from './journal.ts';
import { sleep } from './wait.ts';
import { BASE_FAULT_KINDS, type FaultKind, type LossyFaultKind, type World } from './world.ts';

export const FAULT_WEIGHTS: Record<FaultKind, number> = {
  kill: 3,
  pause: 3,
  redisRestart: 1,
  slowModel: 2,
  redisWipe: 1,
  failover: 1,
};

/** The wait before each fault, in ms. */
export const FAULT_GAP_MS = { min: 1500, max: 7500 } as const;

/** A run this long or longer injects every kind (the module's doc), or fails. */
export const EVERY_KIND_SECONDS = 60;

/** The kinds of `kinds` (the run's) not injected so far (the summary's `faultKindsMissed`). */
export const missedFaultKinds = (
  injected: Readonly<Partial<Record<FaultKind, number>>>,
  kinds: readonly FaultKind[] = BASE_FAULT_KINDS,
): FaultKind[] => kinds.filter((kind) => !injected[kind]);

/**
 * The next fault: the wait before it (FAULT_GAP_MS), and its kind, one never injected yet while there is one (a seeded
 * pick), else drawn by FAULT_WEIGHTS. `injected` changes only as a fault starts, so it is the same after the wait.
 */
export function nextFault(
  prng: Prng,
  injected: Readonly<Partial<Record<FaultKind, number>>>,
  kinds: readonly FaultKind[] = BASE_FAULT_KINDS,
): { gapMs: number; kind: FaultKind } {
  const gapMs = prng.int(FAULT_GAP_MS.min, FAULT_GAP_MS.max);
  const owed = missedFaultKinds(injected, kinds);
  const weights = Object.fromEntries(kinds.map((k) => [k, FAULT_WEIGHTS[k]])) as Record<FaultKind, number>;
  return { gapMs, kind: owed.length > 0 ? prng.pick(owed) : prng.weighted(weights) };
}

/** Starts a killed instance again, retrying (it may exit at start while Redis is away). */
export async function restart(instance: Instance, log: (line: string) => void): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await instance.start();
      return;
    } catch (e) {
      await instance.kill();
      if (attempt >= 5) return log(`${instance.name} did not restart: ${e instanceof Error ? e.message : String(e)}`);
      await sleep(1000);
    }
  }
}

export interface Faults {
  stop(): Promise<void>;
}

/** Runs a Redis fault (a restart, and with a pair a wipe or a failover): one at a time, skipped while one runs. */
function redisFaults(world: World, redis: ChaosRedis | RedisPair) {
  let busy = false;
  return async (kind: 'redisRestart' | 'redisWipe' | 'failover', p: Prng): Promise<void> => {
    if (busy || (kind !== 'redisRestart' && !('failover' in redis))) return;
    busy = true;
    world.faults[kind]++;
    const lost = () => world.lossyFaults.push({ kind: kind as LossyFaultKind, at: Date.now() });
    try {
      if (kind === 'failover' && 'failover' in redis) {
        const lagMs = p.int(500, 2000);
        journal(`fault failover (replica lags ${lagMs} ms, then promoted)`);
        await redis.failover(lagMs, lost);
        journal('fault failover: the promoted replica serves, the old primary follows it');
        return;
      }
      const down = p.int(300, 2000);
      journal(`fault ${kind} (down ${down} ms${kind === 'redisWipe' ? ', its data removed' : ''})`);
      if (kind === 'redisWipe' && 'wipe' in redis) {
        lost();
        await redis.wipe(down);
      } else {
        await redis.crash();
        await sleep(down);
        await redis.start();
      }
      journal(`fault ${kind}: serving again`);
    } finally {
      busy = false;
    }
  };
}

export function startFaults(
  world: World,
  redis: ChaosRedis | RedisPair,
  model: SlowModel,
  log: (line: string) => void,
): Faults {
  const prng = world.prng.fork('faults');
  const active = new Set<Promise<void>>();
  let stopped = false;
  const redisFault = redisFaults(world, redis);

  const target = (): Instance | undefined => {
    const up = world.instances.filter((i) => i.state === 'up');
    return up.length > 1 ? prng.pick(up) : undefined;
  };

  const run = async (kind: FaultKind, p: Prng): Promise<void> => {
    if (kind === 'kill' || kind === 'pause') {
      const instance = target();
      if (!instance) return;
      world.faults[kind]++;
      if (kind === 'kill') {
        const down = p.int(500, 3000);
        journal(`fault kill ${instance.name} (restart after ${down} ms)`);
        await instance.kill();
        await sleep(down);
        await restart(instance, log);
        journal(`fault kill ${instance.name}: serving again`);
      } else {
        const paused = LEASE_MS + p.int(300, 2500);
        journal(`fault pause ${instance.name} for ${paused} ms`);
        instance.pause();
        await sleep(paused);
        instance.resume();
        journal(`fault pause ${instance.name}: continued`);
      }
    } else if (kind !== 'slowModel') {
      await redisFault(kind, p);
    } else {
      if (model.delayMs > 0) return;
      world.faults.slowModel++;
      model.delayMs = p.int(1000, 5000);
      const lasting = p.int(3000, 10_000);
      journal(`fault slowModel: ${model.delayMs} ms per request for ${lasting} ms`);
      await sleep(lasting);
      model.delayMs = 0;
      journal('fault slowModel: fast again');
    }
  };

  const loop = (async () => {
    let n = 0;
    while (!stopped) {
      const { gapMs, kind } = nextFault(prng, world.faults, world.faultKinds);
      await sleep(gapMs);
      if (stopped) break;
      const fault = run(kind, prng.fork(`fault-${++n}`)).catch((e: unknown) =>
        log(`fault ${kind} failed: ${String(e)}`),
      );
      active.add(fault);
      void fault.finally(() => active.delete(fault));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      await Promise.allSettled([...active]);
    },
  };
}
