/**
 * The chaos run's fault injector: until `stop()`, a fault every 1.5–7.5 s (about 130 in 600 s), its kind and its
 * target and durations drawn from the PRNG:
 * - `kill`: SIGKILL an instance, restart it 0.5–3 s later (same port, same agent file);
 * - `pause`: SIGSTOP an instance for more than the lease (lease + 0.3–2.5 s), then SIGCONT;
 * - `redisRestart`: SIGKILL redis-server, start it again 0.3–2 s later on the same port and folder (AOF);
 * - `slowModel`: every model request waits 1–5 s before it reaches the simulator, for 3–10 s.
 * Faults overlap, but one instance is always left up (never killed or paused), one Redis restart and one slow model
 * at a time: a fault whose target is not available is skipped (not counted). A killed instance that fails to start
 * (Redis away at that moment) is started again, up to 5 times. `stop()` waits for the faults in progress to end
 * (every instance up, Redis up, the model fast again).
 */
import { LEASE_MS } from './agent-file.ts';
import type { Instance } from './instances.ts';
import type { Prng } from './prng.ts';
import type { ChaosRedis } from './redis-server.ts';
import type { SlowModel } from './slow-model.ts';
import { journal } from './journal.ts';
import { sleep } from './wait.ts';
import type { FaultKind, World } from './world.ts';

export const FAULT_WEIGHTS: Record<FaultKind, number> = { kill: 3, pause: 3, redisRestart: 1, slowModel: 2 };

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

export function startFaults(world: World, redis: ChaosRedis, model: SlowModel, log: (line: string) => void): Faults {
  const prng = world.prng.fork('faults');
  const active = new Set<Promise<void>>();
  let stopped = false;
  let redisBusy = false;

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
    } else if (kind === 'redisRestart') {
      if (redisBusy) return;
      redisBusy = true;
      world.faults.redisRestart++;
      try {
        const down = p.int(300, 2000);
        journal(`fault redisRestart (down ${down} ms)`);
        await redis.crash();
        await sleep(down);
        await redis.start();
        journal('fault redisRestart: serving again');
      } finally {
        redisBusy = false;
      }
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
      await sleep(prng.int(1500, 7500));
      if (stopped) break;
      const kind = prng.weighted(FAULT_WEIGHTS);
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
