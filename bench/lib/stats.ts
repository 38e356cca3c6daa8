/** Samples (ms) → percentiles. Values are kept in a growable Float64Array to stay cheap at 10^6 samples. */
export class Samples {
  private data = new Float64Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }

  summary(): Summary {
    const sorted = this.data.slice(0, this.length).sort();
    const at = (p: number) =>
      sorted.length === 0
        ? NaN
        : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN);
    let sum = 0;
    for (const v of sorted) sum += v;
    return {
      n: sorted.length,
      mean: round(sorted.length ? sum / sorted.length : NaN),
      p50: round(at(50)),
      p90: round(at(90)),
      p99: round(at(99)),
      max: round(sorted.length ? (sorted[sorted.length - 1] ?? NaN) : NaN),
    };
  }
}

export interface Summary {
  n: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Rounds to 3 significant decimals for results files (µs precision for ms values). */
export function round(v: number, digits = 3): number {
  if (!Number.isFinite(v)) return v;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves `p` or rejects after `ms` with a message naming `what`. */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>(
        (_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
