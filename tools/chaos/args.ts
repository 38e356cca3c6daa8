/**
 * The chaos run's command line: `--seconds N` (default 60; how long load and faults run), `--seed S` (an integer;
 * default: one drawn at random and printed), `--instances K` (default 3), `--sources` (run agentd's TypeScript
 * sources through tsx instead of the compiled `bin/agentd.js`), `--keep` (keep the run's folder: agentd logs,
 * receivers' logs, the marker file, `recorded.json`), `--tolerate K,…` (violation kinds reported but not failing the
 * run: what CI knows to be open; the summary counts them all the same).
 */
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { VIOLATION_KINDS, type ViolationKind } from './checker.ts';

export interface ChaosArgs {
  seconds: number;
  seed: number;
  seedGiven: boolean;
  instances: number;
  sources: boolean;
  keep: boolean;
  /** Kinds counted and shown but not failing the run. */
  tolerate: ViolationKind[];
}

export const USAGE =
  'usage: npm run chaos -- [--seconds N] [--seed S] [--instances K] [--sources] [--keep] [--tolerate KIND,…]';

export function parseChaosArgs(argv: string[]): ChaosArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      seconds: { type: 'string' },
      seed: { type: 'string' },
      instances: { type: 'string' },
      sources: { type: 'boolean' },
      keep: { type: 'boolean' },
      tolerate: { type: 'string' },
    },
  });
  const int = (name: string, text: string | undefined, fallback: number, min: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}, got "${text}"`);
    return n;
  };
  const seedGiven = values.seed !== undefined;
  return {
    seconds: int('seconds', values.seconds, 60, 5),
    seed: int('seed', values.seed, randomInt(1, 2 ** 31 - 1), 0),
    seedGiven,
    instances: int('instances', values.instances, 3, 2),
    sources: values.sources ?? false,
    keep: values.keep ?? false,
    tolerate: kindsOf(values.tolerate),
  };
}

export function replayCommand(a: ChaosArgs): string {
  return `npm run chaos -- --seconds ${a.seconds} --seed ${a.seed} --instances ${a.instances}${a.sources ? ' --sources' : ''}`;
}

/** `--tolerate`'s kinds, each one the checker counts. */
function kindsOf(text: string | undefined): ViolationKind[] {
  if (text === undefined) return [];
  return text.split(',').map((k) => {
    if (!(VIOLATION_KINDS as readonly string[]).includes(k))
      throw new Error(`--tolerate: "${k}" is not a violation kind (${VIOLATION_KINDS.join(', ')})`);
    return k as ViolationKind;
  });
}
