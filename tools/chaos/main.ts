/**
 * `npm run chaos -- --seconds N --seed S [--instances K]` (docs/chaos.md): K agentd instances on a private
 * redis-server, driven by a seeded mixed load while seeded faults hit them (kill -9, SIGSTOP past the lease, Redis
 * restarts, a slow model); once load and faults stop and the instances settle, the checker (checker.ts) counts what
 * was lost or done twice. Progress goes to stderr; the LAST line on stdout is the JSON summary
 * `{seed, seconds, instances, lossy, replicas, operations, faults, faultKindsMissed, lost, violations, commit}` (`lost`:
 * acknowledged turns the store lost, `noticed` by agentd or lost `silently`, `byFault`). Exit 0 when every violation
 * count is 0, 1 when one is not, 2 when the run itself failed (its summary then has `error`; a run of 60 s or more
 * that missed a fault kind failed too); a failure prints the command that
 * replays the seed. Every process and the run's folder are removed at the end, on an error and on Ctrl-C; a watchdog
 * bounds the whole run.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseChaosArgs, replayCommand, USAGE, type ChaosArgs } from './args.ts';
import { check, VIOLATION_KINDS, type CheckResult } from './checker.ts';
import { cleanupAll, cleanupOnSignals, onCleanup, onExit } from './cleanup.ts';
import { drive } from './drive.ts';
import { EVERY_KIND_SECONDS, missedFaultKinds } from './faults.ts';
import { openJournal } from './journal.ts';
import { createPrng } from './prng.ts';
import { setUp } from './setup.ts';
import { BASE_FAULT_KINDS, FAULT_KINDS, LOSSY_FAULT_KINDS, totalOperations, type World } from './world.ts';

const say = (line: string) => process.stderr.write(`chaos: ${line}\n`);

function commit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: new URL('../../', import.meta.url).pathname })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

/** The fault kinds a run with `args` injects. */
const kindsOf = (args: ChaosArgs) => (args.lossy ? [...BASE_FAULT_KINDS, ...LOSSY_FAULT_KINDS] : [...BASE_FAULT_KINDS]);

function summary(args: ChaosArgs, world: World | undefined, result: CheckResult | undefined, error?: string) {
  const faults = world?.faults ?? (Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as World['faults']);
  return {
    seed: args.seed,
    seconds: args.seconds,
    instances: args.instances,
    lossy: args.lossy,
    replicas: args.replicas,
    operations: world ? totalOperations(world) : 0,
    faults,
    faultKindsMissed: missedFaultKinds(faults, kindsOf(args)),
    lost: result?.lost ?? { acknowledged: 0, noticed: 0, silently: 0, byFault: {} },
    violations: result?.violations ?? Object.fromEntries(VIOLATION_KINDS.map((k) => [k, 0])),
    commit: commit(),
    ...(error !== undefined && { error }),
  };
}

async function main(): Promise<number> {
  let args: ChaosArgs;
  try {
    args = parseChaosArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${USAGE}\n`);
    return 2;
  }
  const replay = () => `replay: ${replayCommand(args)}`;
  say(`seed ${args.seed}${args.seedGiven ? '' : ' (drawn at random)'}; ${replay()}`);
  cleanupOnSignals(replay);
  const dir = mkdtempSync(join(tmpdir(), 'agentd-chaos-'));
  openJournal(join(dir, 'journal.log'));
  const remove = () => {
    if (!args.keep) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  onCleanup(() => {
    if (args.keep) say(`run folder kept: ${dir}`);
    remove();
  });
  onExit(remove); // again as the process exits: whatever a stopped part wrote meanwhile
  // Load, settling (≤ 120 s) and start-up (≤ 90 s per instance) are each bounded; this bounds them all.
  const watchdog = setTimeout(
    () => {
      say(`watchdog: the run passed ${args.seconds + 600} s; stopping. ${replay()}`);
      process.stdout.write(`${JSON.stringify(summary(args, world, undefined, 'watchdog'))}\n`);
      void cleanupAll().finally(() => process.exit(2));
    },
    (args.seconds + 600) * 1000,
  );
  watchdog.unref();

  const prng = createPrng(args.seed);
  let world: World | undefined;
  try {
    const env = await setUp(args, dir, prng, say);
    world = {
      seed: args.seed,
      instances: env.instances,
      prng,
      pushUrl: env.pushes.url,
      acked: [],
      a2aTasks: [],
      mcpTasks: [],
      operations: {},
      faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as World['faults'],
      faultKinds: kindsOf(args),
      lossyFaults: [],
      syncs: [],
    };
    const recorded = await drive(args, world, env, say);
    say(`operations by kind: ${JSON.stringify(world.operations)}`);
    writeFileSync(join(dir, 'recorded.json'), JSON.stringify(recorded));
    const result = check(recorded);
    if (args.lossy || result.lost.acknowledged > 0)
      say(
        `lost acknowledged turns: ${result.lost.acknowledged} (noticed ${result.lost.noticed}, silently ${result.lost.silently}; by fault ${JSON.stringify(result.lost.byFault)})`,
      );
    const found = VIOLATION_KINDS.filter((k) => result.violations[k] > 0);
    for (const kind of found)
      say(
        `${kind}: ${result.violations[kind]}${args.tolerate.includes(kind) ? ' (tolerated)' : ''}, e.g. ${(result.examples[kind] ?? []).join('; ')}`,
      );
    const failed = found.filter((k) => !args.tolerate.includes(k));
    if (failed.length > 0) say(`FAILED with seed ${args.seed}; ${replay()} (add --keep to keep the logs)`);
    else say(`no violations${found.length > 0 ? ' but tolerated ones' : ''} (seed ${args.seed})`);
    const missed = missedFaultKinds(world.faults, world.faultKinds);
    const uncovered = args.seconds >= EVERY_KIND_SECONDS && missed.length > 0;
    if (uncovered) say(`FAILED: no ${missed.join(', ')} fault in ${args.seconds} s; ${replay()}`);
    await cleanupAll();
    const error = uncovered ? `fault kinds never injected: ${missed.join(', ')}` : undefined;
    process.stdout.write(`${JSON.stringify(summary(args, world, result, error))}\n`);
    return uncovered ? 2 : failed.length > 0 ? 1 : 0;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    say(`the run failed: ${message}; seed ${args.seed}; ${replay()}`);
    await cleanupAll();
    process.stdout.write(`${JSON.stringify(summary(args, world, undefined, message))}\n`);
    return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`chaos: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    void cleanupAll().finally(() => process.exit(2));
  },
);
