/**
 * Runs the benchmarks: `npm run bench` (quick set) or `npm run bench:full`.
 *
 *   tsx bench/run.ts [--full] [--only name,name] [--no-readme] [--engine-set node|uws]
 *   tsx bench/run.ts --report        (only rebuild the README section from bench/results/)
 *
 * `--engine-set E` (what `npm run bench:engines` runs, once per engine) writes the results to
 * bench/results/engines/E/ instead, for the README's both-engines table, and leaves the README alone.
 *
 * agentd runs compiled, as users run it (`node dist/src/cli.js`; `npm run build` first), or from its
 * TypeScript sources under tsx with BENCH_RUN=tsx; AGENTD_ENGINE=auto|uws|node passes through to
 * it. Each result records both (how it ran, and the engine GET /api/health reported).
 *
 * Starts one model simulator, then each benchmark on a fresh agentd process; writes
 * bench/results/<name>.json per benchmark and regenerates the results section of bench/README.md.
 * Everything runs on loopback, every child process is killed on exit or interrupt, and a
 * watchdog ends the run if it overstays its budget.
 */
import { parseArgs } from 'node:util';
import { BENCHES, REPORTED } from './benches.ts';
import { compiledEntry, RUN, startSimulator, takeRuntime } from './lib/procs.ts';
import { machineSpeed } from './lib/speed.ts';
import { engineSetDir, passes, updateReadme, writeResult } from './lib/report.ts';
const { values } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-readme': { type: 'boolean', default: false },
    report: { type: 'boolean', default: false },
    'engine-set': { type: 'string' },
  },
});
const engineSet = values['engine-set'];
if (engineSet !== undefined && engineSet !== 'node' && engineSet !== 'uws') {
  process.stderr.write(`bench: --engine-set is node or uws, not ${engineSet}\n`);
  process.exit(2);
}
if (engineSet) process.env.AGENTD_ENGINE = engineSet; // agentd's children inherit it
if (values.report) {
  updateReadme(REPORTED);
  process.exit(0);
}
const mode = values.full ? 'full' : 'quick';
const only = values.only?.split(',').map((s) => s.trim());
const unknown = only?.filter((n) => !BENCHES.some((b) => b.name === n));
if (unknown?.length) {
  process.stderr.write(
    `bench: unknown benchmark(s) ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}\n`,
  );
  process.exit(2);
}
if (RUN === 'compiled') {
  try {
    compiledEntry();
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n`);
    process.exit(2);
  }
}
const selected = BENCHES.filter((b) => (only ? only.includes(b.name) : mode === 'full' || b.quick));

const budgetMs = (mode === 'full' ? 25 : 5) * 60_000;
const watchdog = setTimeout(() => {
  process.stderr.write(`bench: still running after ${budgetMs / 60_000} min; giving up\n`);
  process.exit(1);
}, budgetMs);
watchdog.unref();

const log = (line: string) => process.stdout.write(`${line}\n`);
const t0 = performance.now();
log(
  `agentd benchmarks (${mode}, agentd ${RUN === 'compiled' ? 'compiled: dist/src/cli.js' : 'under tsx: src/cli.ts'}${process.env.AGENTD_ENGINE ? `, AGENTD_ENGINE=${process.env.AGENTD_ENGINE}` : ''}): ${selected.map((b) => b.name).join(', ')}`,
);
const sim = await startSimulator();
let failed = 0;
try {
  for (const bench of selected) {
    const started = performance.now();
    log(`▶ ${bench.name}: ${bench.title}`);
    try {
      const speed = await machineSpeed();
      log(`  machine speed: JS workload ${speed.jsMs} ms, loopback round trip ${speed.loopbackUs} µs`);
      takeRuntime();
      const result = await bench.run({ mode, sim, log });
      const runtime = takeRuntime();
      log(`  agentd ran: ${runtime.run}, engine ${runtime.engine}`);
      writeResult(result, mode, speed, runtime, undefined, engineSet ? engineSetDir(engineSet) : undefined);
      for (const [k, v] of result.rows) log(`    ${k}: ${v}`);
      for (const g of result.goals)
        log(
          `    ${passes(g) ? 'MET ' : 'MISS'} ${g.label}: ${g.value} ${g.unit} (target ${g.better === 'lower' ? '≤' : '≥'} ${g.target})`,
        );
    } catch (err) {
      failed++;
      log(`  ✗ ${bench.name} failed: ${(err as Error).stack ?? String(err)}`);
    }
    log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
} finally {
  await sim.stop();
}
if (!values['no-readme'] && !engineSet) updateReadme(REPORTED);
log(
  `done in ${((performance.now() - t0) / 1000).toFixed(1)} s; results in bench/results/, table in bench/README.md${failed ? `; ${failed} benchmark(s) failed` : ''}`,
);
process.exit(failed ? 1 : 0);
