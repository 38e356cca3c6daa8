/**
 * `npm run bench:peers`: agentd and a peer (Mastra, pinned in bench/peers/mastra-app/) side by side
 * under the same load from the same fake model, as issue 41 measured them by hand.
 *
 *   tsx bench/peers/main.ts [--quick] [--rounds N] [--clients N] [--streams N]
 *                           [--ttft-ms MS] [--tokens-per-sec N] [--reply-tokens N] [--no-readme]
 *
 * Installs and builds the Mastra app in a scratch folder (npm registry), then runs agentd compiled
 * (`node bin/agentd.js`, the node:http engine unless AGENTD_ENGINE says otherwise) and Mastra, each
 * pinned to CPU 0, with the simulator and this process (the load generator) on CPU 1, and measures
 * both in alternating windows, plus the model stub alone on CPU 0 as the ceiling. Prints the table
 * with ratios, writes bench/results/peers.json and the README's results section. Loopback only;
 * every process it started is stopped at the end, on failure, on Ctrl-C and by a watchdog.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPORTED } from '../benches.ts';
import { pinSelf } from '../lib/pinning.ts';
import { compiledEntry, ROOT, startService, startSimulator, takeRuntime, type Child } from '../lib/procs.ts';
import { machineLoad, machineSpeed } from '../lib/speed.ts';
import { markdownTable } from '../lib/markdown.ts';
import { passes, updateReadme, writeResult } from '../lib/report.ts';
import { installMastra, startMastra } from './mastra.ts';
import { peerResult } from './result.ts';
import { num, type PeerRounds } from './table.ts';
import { agentdTarget, mastraTarget, streamsWindow, stubTarget, turnsWindow, type Target } from './windows.ts';

const SERVERS_CPU = '0';
const LOADGEN_CPU = '1';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    clients: { type: 'string', default: '20' },
    streams: { type: 'string', default: '200' },
    'ttft-ms': { type: 'string', default: '0' },
    'tokens-per-sec': { type: 'string', default: '20' },
    'reply-tokens': { type: 'string', default: '40' },
    'no-readme': { type: 'boolean', default: false },
  },
});
const fail = (message: string): never => {
  process.stderr.write(`bench:peers: ${message}\n`);
  process.exit(2);
};
const count = (flag: string, text: string | undefined, min: number, max: number): number => {
  const n = Number(text);
  return Number.isInteger(n) && n >= min && n <= max
    ? n
    : fail(`--${flag} must be an integer from ${min} to ${max}, got "${text}"`);
};
const mode = values.quick ? 'quick' : 'full';
const rounds = count('rounds', values.rounds ?? (values.quick ? '1' : '3'), 1, 9);
const clients = count('clients', values.clients, 1, 1000);
const streams = count('streams', values.streams, 1, 2000);
const ttftMs = count('ttft-ms', values['ttft-ms'], 0, 10_000);
const tokensPerSec = count('tokens-per-sec', values['tokens-per-sec'], 1, 1000);
const replyTokens = count('reply-tokens', values['reply-tokens'], 1, 2000);
const turnsMs = values.quick ? 2_000 : 5_000;
const streamMeasureMs = values.quick ? 3_000 : 6_000;
const turnMs = ttftMs + (replyTokens / tokensPerSec) * 1000;
const message = `[[len:${replyTokens}]] [[rate:${tokensPerSec}]]${ttftMs ? ` [[ttft:${ttftMs}]]` : ''} stream please`;

if (availableParallelism() < 2)
  fail('needs 2 CPUs: the servers on CPU 0, the simulator and the load generator on CPU 1');
try {
  compiledEntry();
  pinSelf(LOADGEN_CPU); // for the whole run
} catch (err) {
  fail((err as Error).message);
}
const budgetMs = (values.quick ? 8 : 15) * 60_000 + rounds * 60_000;
setTimeout(() => {
  process.stderr.write(`bench:peers: still running after ${budgetMs / 60_000} min; giving up\n`);
  process.exit(1);
}, budgetMs).unref();

/** The CPUs a process may run on, as the kernel says (`0`, `1`, `0-1`). */
const cpusAllowed = (pid: number) =>
  /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'unknown';
const log = (line: string) => process.stdout.write(`${line}\n`);
const t0 = performance.now();
log(
  `agentd against Mastra (${mode}: ${rounds} round(s); servers on CPU ${SERVERS_CPU}, simulator and load generator on CPU ${LOADGEN_CPU})`,
);
const before = await machineLoad();
const speed = await machineSpeed();
log(
  `  machine: load average ${before.loadavg.join(' / ')}, ${before.busyCores} cores busy; JS workload ${speed.jsMs} ms, loopback round trip ${speed.loopbackUs} µs`,
);
log('  installing and building Mastra (bench/peers/mastra-app) in a scratch folder');
const app = await installMastra();
log(
  `  Mastra: ${Object.entries(app.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')} (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
);

const started: Child[] = [];
const keep = <T extends Child>(c: T): T => (started.push(c), c);
try {
  const sim = keep(await startSimulator());
  const stubSim = keep(await startSimulator([], SERVERS_CPU));
  const engine = process.env.AGENTD_ENGINE ?? 'node';
  const agentd = keep(
    await startService({
      modelUrl: sim.url,
      bin: true,
      cpus: SERVERS_CPU,
      env: { AGENTD_ENGINE: engine, NODE_ENV: 'production' },
    }),
  );
  const mastra = keep(await startMastra(app, sim.url, SERVERS_CPU));
  const a = agentdTarget(agentd.pid, agentd.port);
  const b = mastraTarget(mastra.pid, mastra.port);
  const stub = stubTarget(stubSim.pid, stubSim.port);
  const direct = stubTarget(sim.pid, sim.port);
  log(
    `  agentd (engine ${agentd.engine ?? 'unknown'}) on :${agentd.port}, Mastra on :${mastra.port}, simulator on :${sim.port}, the stub alone on :${stubSim.port}`,
  );
  const pinned = {
    agentd: cpusAllowed(agentd.pid),
    mastra: cpusAllowed(mastra.pid),
    stub: cpusAllowed(stubSim.pid),
    simulator: cpusAllowed(sim.pid),
    loadgen: cpusAllowed(process.pid),
  };
  const wanted = {
    agentd: SERVERS_CPU,
    mastra: SERVERS_CPU,
    stub: SERVERS_CPU,
    simulator: LOADGEN_CPU,
    loadgen: LOADGEN_CPU,
  };
  if (JSON.stringify(pinned) !== JSON.stringify(wanted))
    throw new Error(
      `the processes are not pinned as asked: CPUs allowed ${JSON.stringify(pinned)}, wanted ${JSON.stringify(wanted)}`,
    );

  log('  warm-up: 1 s of instant turns each');
  for (const t of [a, b, stub]) await turnsWindow(t, { clients, durationMs: 1000, round: 0, simPid: sim.pid });
  const r: PeerRounds = { turns: { agentd: [], peer: [], stub: [] }, streams: { agentd: [], peer: [], direct: [] } };
  const order = (i: number): [Target, 'agentd' | 'peer'][] =>
    i % 2 === 0
      ? [
          [a, 'agentd'],
          [b, 'peer'],
        ]
      : [
          [b, 'peer'],
          [a, 'agentd'],
        ];
  for (let i = 0; i < rounds; i++) {
    for (const [t, side] of order(i)) {
      const w = await turnsWindow(t, { clients, durationMs: turnsMs, round: i + 1, simPid: sim.pid });
      r.turns[side].push(w);
      log(
        `  round ${i + 1}/${rounds}, instant turns, ${t.name}: ${num(w.turnsPerSec)}/s, ${num(w.cpuMsPerTurn)} ms CPU/turn, errors ${w.errors}`,
      );
    }
    const w = await turnsWindow(stub, { clients, durationMs: turnsMs, round: i + 1, simPid: sim.pid });
    r.turns.stub.push(w);
    log(`  round ${i + 1}/${rounds}, instant turns, the stub alone: ${num(w.turnsPerSec)}/s`);
  }
  const streamLoad = { n: streams, message, spreadMs: turnMs, rampMs: turnMs + 1000, measureMs: streamMeasureMs };
  for (let i = 0; i < rounds; i++) {
    for (const [t, side] of [[direct, 'direct'] as const, ...order(i)]) {
      const w = await streamsWindow(t, streamLoad, sim.pid);
      r.streams[side].push(w);
      log(
        `  round ${i + 1}/${rounds}, ${streams} streams, ${side === 'direct' ? 'straight to the simulator' : t.name}: first chunk p50 ${num(w.ttfcP50)} / p99 ${num(w.ttfcP99)} ms, ${num(w.cpuUsPerChunk)} µs CPU/chunk, RSS peak ${num(w.rssPeakMb)} MB, errors ${w.errors}`,
      );
    }
  }
  const after = await machineLoad();
  const agentdVersion = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const result = peerResult({
    rounds: r,
    load: { clients, turnsMs, streams, streamMeasureMs, message, rounds },
    cpus: { servers: SERVERS_CPU, loadgen: LOADGEN_CPU, allowed: pinned },
    versions: { agentd: agentdVersion, mastra: app.versions, node: process.version },
    engine: agentd.engine ?? 'unknown',
    machineLoad: { before, after },
  });
  log('');
  log(markdownTable(result.table!.head, result.table!.rows));
  log('');
  for (const [k, v] of result.rows) log(`  ${k}: ${v}`);
  for (const g of result.goals)
    log(`  ${passes(g) ? 'MET ' : 'MISS'} ${g.label}: ${g.value} ${g.unit} (target ≥ ${g.target})`);
  writeResult(result, mode, speed, takeRuntime(), `bench:peers${values.quick ? ' -- --quick' : ''}`);
  if (!values['no-readme']) updateReadme(REPORTED);
  log(
    `done in ${((performance.now() - t0) / 1000).toFixed(0)} s; bench/results/peers.json${values['no-readme'] ? '' : ' and bench/README.md'} written`,
  );
} finally {
  for (const c of started.reverse()) await c.stop();
}
process.exit(0);
