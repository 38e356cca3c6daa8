/**
 * The chaos run's one source of randomness: a small seeded PRNG (mulberry32). Every random choice of a run (the load's
 * mix, which instance a request goes to, which fault comes when and for how long) is drawn from one of these, so a seed
 * names the run's plan. Timing still varies between runs (processes, the kernel's scheduler): a replay repeats the
 * choices, not the interleavings. `fork(label)` derives an independent stream, so one part drawing more numbers (a
 * retry, a reconnect) does not shift another part's choices.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** One key, chosen with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
  /** An independent stream derived from this seed and `label`. */
  fork(label: string): Prng;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a label, mixed with the seed: a fork's seed. */
function mix(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export function createPrng(seed: number): Prng {
  const next = mulberry32(seed);
  const prng: Prng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
    weighted: <K extends string>(weights: Readonly<Record<K, number>>): K => {
      const entries = Object.entries(weights) as [K, number][];
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      let at = next() * total;
      for (const [key, w] of entries) {
        at -= w;
        if (at < 0) return key;
      }
      return entries[entries.length - 1]![0];
    },
    fork: (label) => createPrng(mix(seed, label)),
  };
  return prng;
}
