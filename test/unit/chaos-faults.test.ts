/**
 * The chaos run's fault schedule (tools/chaos/faults.ts, nextFault): every run of at least 60 s injects every fault
 * kind, whatever its seed; a kind skipped for want of a target comes next; a seed names the same schedule.
 */
import { describe, expect, it } from 'vitest';
import {
  EVERY_KIND_SECONDS,
  FAULT_GAP_MS,
  FAULT_WEIGHTS,
  missedFaultKinds,
  nextFault,
} from '../../tools/chaos/faults.ts';
import { createPrng } from '../../tools/chaos/prng.ts';
import { BASE_FAULT_KINDS, FAULT_KINDS, type FaultKind } from '../../tools/chaos/world.ts';

const none = (): Record<FaultKind, number> =>
  Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;

/** The faults a run of `seconds` starts, each counted as it starts (as startFaults does when its target is there). */
function schedule(seed: number, seconds: number, kinds: readonly FaultKind[] = BASE_FAULT_KINDS) {
  const prng = createPrng(seed).fork('faults');
  const injected = none();
  const faults: { at: number; kind: FaultKind }[] = [];
  for (let at = 0; ;) {
    const { gapMs, kind } = nextFault(prng, injected, kinds);
    at += gapMs;
    if (at >= seconds * 1000) return { faults, injected };
    injected[kind]++;
    faults.push({ at, kind });
  }
}

describe('the chaos fault schedule', () => {
  it('injects every kind within the first four faults (30 s), so in every run of 60 s, for a thousand seeds', () => {
    for (let seed = 0; seed < 1000; seed++) {
      const { faults, injected } = schedule(seed, EVERY_KIND_SECONDS);
      expect(missedFaultKinds(injected), `seed ${seed}`).toEqual([]);
      expect(new Set(faults.slice(0, 4).map((f) => f.kind)).size, `seed ${seed}`).toBe(BASE_FAULT_KINDS.length);
      expect(injected.redisWipe + injected.failover, `seed ${seed}`).toBe(0); // lossy kinds only with --lossy
      expect(faults[3]!.at).toBeLessThanOrEqual(4 * FAULT_GAP_MS.max);
    }
    // CI's seed, and the seed whose 60 s run drew no Redis restart by weight alone.
    expect(schedule(71, 75).injected.redisRestart).toBeGreaterThan(0);
    expect(schedule(7, 60).injected.redisRestart).toBeGreaterThan(0);
  });

  it('with --lossy, injects the six kinds within the first six faults (45 s), so in every run of 60 s', () => {
    for (let seed = 0; seed < 1000; seed++) {
      const { faults, injected } = schedule(seed, EVERY_KIND_SECONDS, FAULT_KINDS);
      expect(missedFaultKinds(injected, FAULT_KINDS), `seed ${seed}`).toEqual([]);
      expect(new Set(faults.slice(0, 6).map((f) => f.kind)).size, `seed ${seed}`).toBe(FAULT_KINDS.length);
    }
  });

  it('brings a kind never injected (its fault skipped: no target) back as the next fault', () => {
    const prng = createPrng(3);
    for (let i = 0; i < 50; i++)
      expect(nextFault(prng, { kill: 2, pause: 1, redisRestart: 0, slowModel: 4 }).kind).toBe('redisRestart');
  });

  it('then draws kinds by their weights, and a seed names the same schedule', () => {
    const prng = createPrng(11);
    const all = { kill: 1, pause: 1, redisRestart: 1, slowModel: 1 };
    const drawn = none();
    for (let i = 0; i < 9000; i++) drawn[nextFault(prng, all).kind]++;
    const total = BASE_FAULT_KINDS.reduce((sum, k) => sum + FAULT_WEIGHTS[k], 0);
    for (const kind of BASE_FAULT_KINDS) expect(drawn[kind] / 9000).toBeCloseTo(FAULT_WEIGHTS[kind] / total, 1);
    expect(schedule(42, 600)).toEqual(schedule(42, 600));
  });
});
