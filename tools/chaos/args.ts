/**
 * The chaos run's command line: `--seconds N` (default 60; how long load and faults run), `--seed S` (an integer;
 * default: one drawn at random and printed), `--instances K` (default 3), `--sources` (run agentd's TypeScript
 * sources through tsx instead of the compiled `bin/agentd.js`), `--keep` (keep the run's folder: agentd logs,
 * receivers' logs, the marker file, `recorded.json`), `--tolerate K,…` (violation kinds reported but not failing the
 * run: what CI knows to be open; the summary counts them all the same), `--lossy` (Redis with a replica, and the faults
 * that lose acknowledged writes: `redisWipe`, `failover`), `--replicas N` (default 0: `storage.replicas` of the
 * instances, so each write waits for N replicas; more than 0 runs Redis with a replica even without `--lossy`).
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
  lossy: boolean;
  /** `storage.replicas` (0 or 1: the run has one replica). */
  replicas: number;
}

export const USAGE =
  'usage: npm run chaos -- [--seconds N] [--seed S] [--instances K] [--sources] [--keep] [--tolerate KIND,…] [--lossy] [--replicas 0|1]';

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
      lossy: { type: 'boolean' },
      replicas: { type: 'string' },
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
    lossy: values.lossy ?? false,
    replicas: oneReplicaAtMost(int('replicas', values.replicas, 0, 0)),
  };
}

export function replayCommand(a: ChaosArgs): string {
  const flags = `${a.sources ? ' --sources' : ''}${a.lossy ? ' --lossy' : ''}${a.replicas > 0 ? ` --replicas ${a.replicas}` : ''}`;
  return `npm run chaos -- --seconds ${a.seconds} --seed ${a.seed} --instances ${a.instances}${flags}`;
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

/** The run starts one replica: more cannot be waited for. */
function oneReplicaAtMost(n: number): number {
  if (n > 1) throw new Error(`--replicas: the run has one replica, so 0 or 1, got ${n}`);
  return n;
}
