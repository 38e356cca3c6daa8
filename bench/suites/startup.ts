/**
 * Start-up: the compiled service (what users run: `node bin/agentd.js`, which imports
 * dist/src/cli.js) against the TypeScript sources under tsx (`node --import tsx src/cli.ts`),
 * interleaved (each round alternates which goes first, so drift and other jobs hit both alike):
 *
 * - `agentd --version`: wall time from spawn to exit;
 * - serving: spawn → the first `GET /api/health` 200 (bench.yml: no tool servers), then → the first
 *   `GET /api/health/ready` 200; health is polled from spawn every POLL_MS until a deadline;
 * - RSS (and threads) once ready: read SETTLE_MS after /ready answered 200, so start-up's last
 *   allocations and timers have run (no GC forced: users run without --expose-gc);
 * - idle RSS of the compiled service: read every IDLE_POLL_MS until V8's memory reducer has shrunk the
 *   heap it grew while loading modules (RSS ≥ 10 % under the first reading and steady for 2 s), or
 *   IDLE_MAX_MS; the service gets no request meanwhile.
 *
 * Neither runs the bench probe or --expose-gc: these are the commands users type.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ms, type Bench } from '../lib/bench.ts';
import {
  compiledEntry,
  freePort,
  httpGet,
  noteRuntime,
  ROOT,
  sampleProc,
  scratchDir,
  track,
  type RunKind,
} from '../lib/procs.ts';
import { round, Samples, sleep, type Summary } from '../lib/stats.ts';

const VERSION_RUNS = 10;
const START_RUNS = 5;
const POLL_MS = 5;
const DEADLINE_MS = 30_000;
const SETTLE_MS = 1_000;
const IDLE_RUNS = 3;
const IDLE_POLL_MS = 500;
const IDLE_MAX_MS = 20_000;
const RUNS: RunKind[] = ['compiled', 'tsx'];
/** `node` alone (`node -e ''`): the floor under both, timed beside `--version`. */
type Way = RunKind | 'node';
/** The command of each way to run agentd (cwd ROOT). */
const COMMAND: Record<Way, string[]> = {
  compiled: ['bin/agentd.js'],
  tsx: ['--import', 'tsx', 'src/cli.ts'],
  node: ['-e', ''],
};

/** Spawns `node <command> <args>` with its output in a scratch log; resolves the child and its exit. */
function start(run: Way, args: string[], env: NodeJS.ProcessEnv = {}) {
  const logFile = join(scratchDir(`startup-${run}`), 'out.log');
  const fd = openSync(logFile, 'w');
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...COMMAND[run], ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = track(proc);
  return { proc, t0, logFile, exited };
}

/** Polls `path` until it answers 200; the time it did (performance.now()) and its body. */
async function until200(
  port: number,
  path: string,
  exited: Promise<number | null>,
  logFile: string,
): Promise<{ at: number; body: string }> {
  let gone: number | null | undefined;
  void exited.then((code) => (gone = code));
  const deadline = performance.now() + DEADLINE_MS;
  for (;;) {
    const r = await httpGet(port, path);
    if (r?.status === 200) return { at: performance.now(), body: r.body };
    if (gone !== undefined) throw new Error(`agentd exited with ${gone} before ${path} answered 200 (log: ${logFile})`);
    if (performance.now() > deadline)
      throw new Error(
        `${path} did not answer 200 within ${DEADLINE_MS} ms (last: ${r?.status ?? 'no answer'}; log: ${logFile})`,
      );
    await sleep(POLL_MS);
  }
}

async function versionOnce(run: Way): Promise<number> {
  const { t0, exited, logFile } = start(run, run === 'node' ? [] : ['--version']);
  const code = await exited;
  const wall = performance.now() - t0;
  if (code !== 0) throw new Error(`agentd --version (${run}) exited with ${code} (log: ${logFile})`);
  return wall;
}

interface StartSample {
  healthMs: number;
  readyMs: number;
  rssKb: number;
  threads: number;
  engine: string | undefined;
}

/** Serves bench.yml (no tool servers, a fresh JSONL folder, an unreachable model) as `run`; stopped once `use` ends. */
async function serving<T>(run: RunKind, use: (agentd: ReturnType<typeof start> & { port: number }) => Promise<T>) {
  const port = await freePort();
  const agentd = start(run, ['--agent', 'bench/agents/bench.yml', '--web-port', String(port)], {
    BENCH_MODEL_URL: 'http://127.0.0.1:9/v1',
    BENCH_DATA_DIR: scratchDir('startup-data'),
  });
  try {
    return await use({ ...agentd, port });
  } finally {
    agentd.proc.kill('SIGTERM');
    const timer = setTimeout(() => agentd.proc.kill('SIGKILL'), 5_000);
    await agentd.exited;
    clearTimeout(timer);
  }
}

const serveOnce = (run: RunKind): Promise<StartSample> =>
  serving(run, async ({ proc, t0, exited, logFile, port }) => {
    const health = await until200(port, '/api/health', exited, logFile);
    const ready = await until200(port, '/api/health/ready', exited, logFile);
    await sleep(SETTLE_MS);
    const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
    const engine = (JSON.parse(health.body) as { engine?: string }).engine;
    return {
      healthMs: health.at - t0,
      readyMs: ready.at - t0,
      rssKb: sampleProc(proc.pid!).rssKb,
      threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 0),
      engine,
    };
  });

interface IdleSample {
  /** RSS once idle (the last reading). */
  rssKb: number;
  /** ms after /ready answered 200 when RSS fell ≥ 10 % under its first reading; undefined when it did not. */
  reducedAtMs: number | undefined;
}

/** The compiled service left idle once ready: its RSS readings until the memory reducer ran (see the header). */
const idleOnce = (): Promise<IdleSample> =>
  serving('compiled', async ({ proc, exited, logFile, port }) => {
    const ready = await until200(port, '/api/health/ready', exited, logFile);
    await sleep(SETTLE_MS);
    const first = sampleProc(proc.pid!).rssKb;
    let reducedAtMs: number | undefined;
    let rssKb = first;
    let steadySince = performance.now();
    while (performance.now() - ready.at < IDLE_MAX_MS) {
      await sleep(IDLE_POLL_MS);
      const now = sampleProc(proc.pid!).rssKb;
      if (Math.abs(now - rssKb) > rssKb * 0.01) steadySince = performance.now();
      rssKb = now;
      if (reducedAtMs === undefined && now < first * 0.9) reducedAtMs = performance.now() - ready.at;
      if (reducedAtMs !== undefined && performance.now() - steadySince >= 2_000) break;
    }
    return { rssKb, reducedAtMs };
  });

/** Runs `fn` for each way `rounds` times after one warm-up each, alternating the order every round. */
async function interleaved<W extends Way, T>(
  ways: W[],
  rounds: number,
  fn: (run: W) => Promise<T>,
): Promise<Record<W, T[]>> {
  const out = Object.fromEntries(ways.map((w) => [w, [] as T[]])) as Record<W, T[]>;
  for (const run of ways) await fn(run);
  for (let i = 0; i < rounds; i++) {
    for (const run of i % 2 ? [...ways].reverse() : ways) out[run].push(await fn(run));
  }
  return out;
}

const summary = (values: number[]): Summary => {
  const s = new Samples();
  for (const v of values) s.push(v);
  return s.summary();
};
const mb = (kb: number) => round(kb / 1024, 1);
const ratio = (c: number, t: number) => `tsx ×${(t / c).toFixed(2)}`;

export const startupBench: Bench = {
  name: 'startup',
  title: 'Start-up: compiled against tsx',
  quick: true,
  async run({ log }) {
    compiledEntry();
    const load0 = loadavg()[0]!;
    log(`  agentd --version × ${VERSION_RUNS} each`);
    const version = await interleaved<Way, number>(['compiled', 'tsx', 'node'], VERSION_RUNS, versionOnce);
    log(`  serving × ${START_RUNS} each`);
    const serving = await interleaved(RUNS, START_RUNS, serveOnce);
    log(`  idle, compiled × ${IDLE_RUNS}`);
    const idle: IdleSample[] = [];
    for (let i = 0; i < IDLE_RUNS; i++) idle.push(await idleOnce());
    const load1 = loadavg()[0]!;
    for (const run of RUNS) for (const s of serving[run]) noteRuntime(run, s.engine);
    const v = { compiled: summary(version.compiled), tsx: summary(version.tsx), node: summary(version.node) };
    const pick = (run: RunKind, key: 'healthMs' | 'readyMs' | 'rssKb' | 'threads') =>
      summary(serving[run].map((s) => s[key]));
    const health = { compiled: pick('compiled', 'healthMs'), tsx: pick('tsx', 'healthMs') };
    const ready = { compiled: pick('compiled', 'readyMs'), tsx: pick('tsx', 'readyMs') };
    const rss = { compiled: pick('compiled', 'rssKb'), tsx: pick('tsx', 'rssKb') };
    const threads = { compiled: pick('compiled', 'threads'), tsx: pick('tsx', 'threads') };
    const idleRss = summary(idle.map((s) => s.rssKb));
    const reducedAt = idle.map((s) => s.reducedAtMs).filter((t) => t !== undefined);
    const reducedText = reducedAt.length
      ? `it fell ${Math.round(Math.min(...reducedAt) / 1000)}–${Math.round(Math.max(...reducedAt) / 1000)} s after ready in ${reducedAt.length} of ${IDLE_RUNS} runs`
      : `it did not fall within ${IDLE_MAX_MS / 1000} s`;
    const range = (run: RunKind, key: 'healthMs' | 'readyMs') => {
      const values = serving[run].map((s) => s[key]);
      return `${ms(Math.min(...values))}–${ms(Math.max(...values))}`;
    };
    return {
      name: 'startup',
      title: 'Start-up: compiled against tsx',
      load: `${VERSION_RUNS} \`--version\` runs and ${START_RUNS} starts of each way (after one warm-up each), alternating which goes first; \`--agent bench/agents/bench.yml\` (no tool servers, a fresh JSONL directory); health polled every ${POLL_MS} ms from spawn; RSS read ${SETTLE_MS / 1000} s after /api/health/ready answered 200; idle RSS from ${IDLE_RUNS} more starts of the compiled service, read every ${IDLE_POLL_MS} ms until it fell ≥ 10 % and held for 2 s (at most ${IDLE_MAX_MS / 1000} s). Compiled: \`node bin/agentd.js …\` (dist/src/cli.js); tsx: \`node --import tsx src/cli.ts …\`. Load average (1 min) ${load0.toFixed(1)} before, ${load1.toFixed(1)} after.`,
      rows: [
        ['`agentd --version` wall p50 / p90, compiled', `${ms(v.compiled.p50)} / ${ms(v.compiled.p90)}`],
        [
          '`agentd --version` wall p50 / p90, tsx',
          `${ms(v.tsx.p50)} / ${ms(v.tsx.p90)} (${ratio(v.compiled.p50, v.tsx.p50)})`,
        ],
        ["— node alone (`node -e ''`), the floor under both, p50 / p90", `${ms(v.node.p50)} / ${ms(v.node.p90)}`],
        [
          'spawn → first GET /api/health 200, median (min–max), compiled',
          `${ms(health.compiled.p50)} (${range('compiled', 'healthMs')})`,
        ],
        [
          'spawn → first GET /api/health 200, median (min–max), tsx',
          `${ms(health.tsx.p50)} (${range('tsx', 'healthMs')}; ${ratio(health.compiled.p50, health.tsx.p50)})`,
        ],
        [
          'spawn → first GET /api/health/ready 200, median, compiled / tsx',
          `${ms(ready.compiled.p50)} / ${ms(ready.tsx.p50)}`,
        ],
        [
          'RSS 1 s after ready, median, compiled / tsx',
          `${mb(rss.compiled.p50)} / ${mb(rss.tsx.p50)} MB (tsx +${mb(rss.tsx.p50 - rss.compiled.p50)} MB)`,
        ],
        ['idle RSS once V8 reduced its heap, median, compiled', `${mb(idleRss.p50)} MB (${reducedText})`],
        ['threads once ready, compiled / tsx', `${threads.compiled.p50} / ${threads.tsx.p50}`],
        ['machine load average (1 min), before / after', `${load0.toFixed(1)} / ${load1.toFixed(1)}`],
      ],
      metrics: {
        versionMs: {
          compiled: version.compiled.map((x) => round(x, 1)),
          tsx: version.tsx.map((x) => round(x, 1)),
          node: version.node.map((x) => round(x, 1)),
        },
        version: v,
        serving,
        health,
        ready,
        rssKb: rss,
        idle,
        threads,
        loadavg: { before: load0, after: load1 },
      },
      goals: [
        {
          id: 'startup-idle-rss',
          label: 'idle RSS of the compiled service (ready, no tool servers)',
          target: 100,
          unit: 'MB',
          better: 'lower',
          value: mb(idleRss.p50),
          note: `VmRSS of the idle service (no tool servers, no sessions, no requests) once V8's memory reducer ran: loading the modules grows the young generation to its full 2 × 16 MB, which V8 gives back ~8 s after the last allocation burst (${reducedText}; 1 s after ready RSS is ${mb(rss.compiled.p50)} MB). An empty node holds ~39 MB here. Redis and OpenTelemetry load only when configured.`,
        },
      ],
      notes: [
        "Wall times include node's own start (the `node -e ''` row) and, for tsx, its loader thread and on-the-fly transpiling (tsx caches transpiled files in the OS temp directory, so warm runs like these are its best case).",
        "The load average includes this benchmark's own processes (about 1 while it runs); other jobs sharing the 2 cores show as load well above that.",
      ],
    };
  },
};
