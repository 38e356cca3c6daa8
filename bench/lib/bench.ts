import type { Simulator } from './procs.ts';
import type { BenchResult } from './report.ts';

export interface BenchContext {
  mode: 'quick' | 'full';
  /** One simulator serves the whole run; benchmarks pace it with directives ([[len]], [[rate]]). */
  sim: Simulator;
  log: (line: string) => void;
}

export interface Bench {
  name: string;
  title: string;
  /** Part of `npm run bench` (otherwise only of `bench:full`). */
  quick: boolean;
  run(ctx: BenchContext): Promise<BenchResult>;
}

/** Formats ms with µs precision below 10 ms. */
export const ms = (v: number) => `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ms`;
export const us = (v: number) => `${v < 10 ? v.toFixed(1) : v.toFixed(0)} µs`;
export const perSec = (v: number) => `${Math.round(v).toLocaleString('en-US')}/s`;
export const cores = (v: number | undefined) => `${(v ?? 0).toFixed(2)} cores`;
