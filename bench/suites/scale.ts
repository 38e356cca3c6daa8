/**
 * Scale-out on Redis: what the Redis store costs per turn against JSONL, and what `--workers 2`
 * (two processes on one port, sharing sessions through Redis) gains over one process, for instant
 * turns and for streaming at 200 and 500 sessions.
 *
 * Every configuration is a fresh agentd (`src/cli.ts`, as users run it) with its own key prefix on
 * one private redis-server; CPU is read from /proc for the supervisor and every worker (summed as
 * agentd), the redis-server, the simulator and the load generator. On 4 or more cores (or with
 * BENCH_SCALE_CPUS) agentd runs on two cores of its own and the load on the others (bench/lib/pinning.ts);
 * on fewer, all of them share the machine's cores.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { cores, ms, perSec, type Bench, type BenchContext } from '../lib/bench.ts';
import { httpLoad, rawRequest } from '../lib/http-load.ts';
import { planPinning, pinSelf, type Pinning } from '../lib/pinning.ts';
import {
  childPids,
  cpuWindow,
  startRedisServer,
  startService,
  startSimulator,
  type RedisProcess,
  type Service,
} from '../lib/procs.ts';
import type { BenchResult, Goal } from '../lib/report.ts';
import { round } from '../lib/stats.ts';
import { agentdStreams, directStreams, type StreamLoad, type StreamResult } from '../lib/streams.ts';
import { REPLY_TOKENS, TOKENS_PER_SEC } from './streaming.ts';

interface Setup {
  label: string;
  agent: string;
  /** `--workers N`; 1: one process. */
  workers: number;
  /** That many one-process services sharing nothing but redis-server, the clients spread over them. */
  separate?: number;
}
const JSONL_1: Setup = { label: 'JSONL, 1 process', agent: 'bench.yml', workers: 1 };
const REDIS_1: Setup = { label: 'Redis, 1 process', agent: 'bench-redis.yml', workers: 1 };
const REDIS_2: Setup = { label: 'Redis, --workers 2', agent: 'bench-redis.yml', workers: 2 };
const REDIS_SEPARATE: Setup = {
  label: 'Redis, 2 separate processes',
  agent: 'bench-redis.yml',
  workers: 1,
  separate: 2,
};

const TITLE = 'Scale-out on Redis: the Redis store against JSONL, --workers 2 against one process';

interface TurnsResult {
  turnsPerSec: number;
  p50: number;
  p99: number;
  /** CPU ms per turn: agentd (all its processes), redis-server. */
  agentdMsPerTurn: number;
  redisMsPerTurn: number;
  /** Redis commands per turn by name (the calls scripts make included), the most first. */
  redisCalls: [string, number][];
  cores: Record<string, number>;
}

/** What every configuration runs against: the model simulator, redis-server, and agentd's cores when pinned. */
interface Rig {
  simUrl: string;
  simPid: number;
  redis: RedisProcess;
  agentdCpus: string | undefined;
}

async function start(setup: Setup, rig: Rig): Promise<{ svcs: Service[]; pids: Record<string, number> }> {
  const { simUrl, redis, agentdCpus } = rig;
  const svcs = await Promise.all(
    Array.from({ length: setup.separate ?? 1 }, () =>
      startService({
        modelUrl: simUrl,
        agent: setup.agent,
        workers: setup.workers,
        cpus: agentdCpus,
        env: { BENCH_REDIS_URL: redis.url, BENCH_REDIS_PREFIX: `bench${randomUUID()}:` },
      }),
    ),
  );
  const pids: Record<string, number> = { redis: redis.pid };
  svcs.forEach((svc, i) => (pids[i === 0 ? 'agentd' : `agentd${i + 1}`] = svc.pid));
  const workers = setup.workers > 1 ? childPids(svcs[0]!.pid) : [];
  workers.forEach((pid, i) => (pids[`worker${i + 1}`] = pid));
  return { svcs, pids };
}

const stopAll = (svcs: Service[]) => Promise.all(svcs.map((svc) => svc.stop()));

/** CPU ms of agentd's processes (supervisors and workers) in a cpuWindow result. */
const agentdMs = (cpuMs: Record<string, number>) =>
  Object.entries(cpuMs)
    .filter(([k]) => k.startsWith('agentd') || k.startsWith('worker'))
    .reduce((a, [, v]) => a + v, 0);

async function turns(setup: Setup, rig: Rig, durationMs: number): Promise<TurnsResult> {
  const { simPid, redis } = rig;
  const { svcs, pids } = await start(setup, rig);
  const port = svcs.map((svc) => svc.port);
  const sync = (sessionId: string) =>
    rawRequest('POST', '/api/message-sync', JSON.stringify({ message: 'hello', sessionId }));
  try {
    await httpLoad({ port, connections: 20, durationMs: 1000, request: (c) => sync(`c${c}`) });
    redis.resetStats();
    const cpu = cpuWindow({ ...pids, simulator: simPid });
    const http = await httpLoad({
      port,
      connections: 20,
      durationMs,
      request: (c) => sync(`c${c}`),
      timeoutMs: 30_000,
    });
    if (http.errors || Object.keys(http.statuses).length)
      throw new Error(
        `${setup.label}: message-sync failed: ${http.errors} errors, statuses ${JSON.stringify(http.statuses)}`,
      );
    const { wallMs, cpuMs } = cpu();
    const all = agentdMs(cpuMs);
    const redisCalls = Object.entries(redis.commandCalls())
      .map(([name, calls]): [string, number] => [name, round(calls / http.requests, 2)])
      .filter(([, perTurn]) => perTurn >= 0.01)
      .sort((a, b) => b[1] - a[1]);
    return {
      turnsPerSec: Math.round(http.rps),
      p50: http.latency.p50,
      p99: http.latency.p99,
      agentdMsPerTurn: round(all / http.requests, 3),
      redisMsPerTurn: round((cpuMs.redis ?? 0) / http.requests, 3),
      redisCalls,
      cores: {
        agentd: round(all / wallMs, 2),
        redis: round((cpuMs.redis ?? 0) / wallMs, 2),
        simulator: round((cpuMs.simulator ?? 0) / wallMs, 2),
        loadgen: round((cpuMs.loadgen ?? 0) / wallMs, 2),
        other: round((cpuMs.other ?? 0) / wallMs, 2),
      },
    };
  } finally {
    await stopAll(svcs);
  }
}

async function streams(
  setup: Setup,
  rig: Rig,
  load: Omit<StreamLoad, 'pids'>,
): Promise<StreamResult & { agentdCores: number }> {
  const { svcs, pids } = await start(setup, rig);
  try {
    const result = await agentdStreams(svcs[0]!.wsUrl, { ...load, pids: { ...pids, simulator: rig.simPid } });
    return { ...result, agentdCores: round(agentdMs(result.cpuMs) / result.wallMs, 2) };
  } finally {
    await stopAll(svcs);
  }
}

async function measure(
  mode: BenchContext['mode'],
  log: BenchContext['log'],
  rig: Rig,
  pin: Pinning | undefined,
): Promise<BenchResult> {
  const durationMs = mode === 'full' ? 5000 : 3000;
  const cpuCount = availableParallelism();
  const turnRows: [string, string][] = [];
  const callRows: [string, string][] = [];
  const byTurns = new Map<Setup, TurnsResult>();
  for (const setup of [JSONL_1, REDIS_1, REDIS_SEPARATE, REDIS_2]) {
    log(`  instant turns, 20 clients: ${setup.label}`);
    const r = await turns(setup, rig, durationMs);
    byTurns.set(setup, r);
    turnRows.push([
      `instant turns/s, p50 / p99, CPU per turn (agentd + redis-server): ${setup.label}`,
      `${perSec(r.turnsPerSec)}, ${ms(r.p50)} / ${ms(r.p99)}, ${r.agentdMsPerTurn} + ${r.redisMsPerTurn} ms (agentd ${cores(r.cores.agentd)}, simulator ${cores(r.cores.simulator)}, load generator ${cores(r.cores.loadgen)})`,
    ]);
    if (setup.agent !== JSONL_1.agent)
      callRows.push([
        `Redis commands per turn, scripts' calls included: ${setup.label}`,
        `${round(
          r.redisCalls.reduce((a, [, n]) => a + n, 0),
          1,
        )}: ${r.redisCalls.map(([name, n]) => `${name} ${n}`).join(', ')}`,
      ]);
  }
  const turnMs = (REPLY_TOKENS / TOKENS_PER_SEC) * 1000;
  const streamRows: [string, string][] = [];
  const byStreams: Record<
    string,
    {
      direct: StreamResult;
      one: StreamResult & { agentdCores: number };
      two: StreamResult & { agentdCores: number };
    }
  > = {};
  for (const n of [200, 500]) {
    const load = {
      n,
      message: `[[len:${REPLY_TOKENS}]] [[rate:${TOKENS_PER_SEC}]] stream please`,
      spreadMs: turnMs,
      rampMs: turnMs + 1000,
      measureMs: mode === 'full' ? 6000 : 4000,
    };
    log(`  ${n} streams: direct to the simulator`);
    const direct = await directStreams(rig.simUrl, { ...load, pids: { simulator: rig.simPid } });
    log(`  ${n} streams: ${REDIS_1.label}`);
    const one = await streams(REDIS_1, rig, load);
    log(`  ${n} streams: ${REDIS_2.label}`);
    const two = await streams(REDIS_2, rig, load);
    byStreams[n] = { direct, one, two };
    for (const [label, r] of [
      [REDIS_1.label, one],
      [REDIS_2.label, two],
    ] as const) {
      streamRows.push([
        `${n} streams, ${label}: chunks/s, added first chunk p50 / p99, agentd CPU`,
        `${perSec(r.chunksPerSec)} of ${perSec(direct.chunksPerSec)}, ${ms(round(r.ttfc.p50 - direct.ttfc.p50))} / ${ms(round(r.ttfc.p99 - direct.ttfc.p99))}, ${cores(r.agentdCores)} (redis-server ${cores(r.cores.redis)}, errors ${r.errors})`,
      ]);
    }
  }
  const jsonl = byTurns.get(JSONL_1)!;
  const single = byTurns.get(REDIS_1)!;
  const workers = byTurns.get(REDIS_2)!;
  const separate = byTurns.get(REDIS_SEPARATE)!;
  const workersRatio = round(workers.turnsPerSec / Math.max(1, single.turnsPerSec), 2);
  const ceiling = round(separate.turnsPerSec / Math.max(1, single.turnsPerSec), 2);
  const ofCeiling = round(workers.turnsPerSec / Math.max(1, separate.turnsPerSec), 2);
  // A forwarded turn is watched from the worker that forwarded it: one SUBSCRIBE each.
  const forwarded = Math.round((Object.fromEntries(workers.redisCalls).subscribe ?? 0) * 100);
  const goals: Goal[] = [
    {
      id: 'workers-2-turns',
      label: 'Instant turns/s, --workers 2 against one process (Redis)',
      target: 1.7,
      unit: '×',
      better: 'higher',
      value: workersRatio,
      note: `${
        pin
          ? `agentd ran on CPUs ${pin.agentd}, the simulator (${cores(workers.cores.simulator ?? 0)}), the load generator (${cores(workers.cores.loadgen ?? 0)}) and redis-server on CPUs ${pin.load}.`
          : `the ${cpuCount} cores also run the simulator (${cores(workers.cores.simulator ?? 0)}), the load generator (${cores(workers.cores.loadgen ?? 0)}) and redis-server, so the second worker has no core of its own.`
      } Two separate agentd processes that share nothing but redis-server reach ×${ceiling} of one process with the same load (CPU per turn ${separate.agentdMsPerTurn} against ${single.agentdMsPerTurn} ms): that is what splitting this load over two event loops gives on this machine, whatever agentd does. --workers 2 reaches ×${ofCeiling} of it (${workers.agentdMsPerTurn} ms per turn; ${forwarded} % of its turns went to the other worker through Redis).${pin ? '' : " The goal needs cores beyond the load's (4 or more: the benchmark then pins agentd apart)."}`,
    },
  ];
  return {
    name: 'scale',
    title: TITLE,
    load: `Instant message-sync turns from 20 keep-alive clients (one session each) for ${durationMs / 1000} s after a 1 s warm-up; streaming as in streaming-N (replies of ${REPLY_TOKENS} pieces at ${TOKENS_PER_SEC} pieces/s). One private redis-server without persistence.`,
    rows: [
      [
        'CPUs (taskset -c)',
        pin
          ? `agentd ${pin.agentd}; simulator, redis-server and load generator ${pin.load}`
          : `not pinned: ${cpuCount} cores, too few to give agentd two of its own beside the load (4 needed; BENCH_SCALE_CPUS=<agentd>:<load> sets them)`,
      ],
      ...turnRows,
      ...callRows,
      [
        'Redis store against JSONL, CPU per turn (agentd + redis-server)',
        `${single.agentdMsPerTurn} + ${single.redisMsPerTurn} ms against ${jsonl.agentdMsPerTurn} ms`,
      ],
      ['--workers 2 against one process (Redis), instant turns/s', `×${workersRatio}`],
      ["this machine's ceiling: 2 separate processes against one process (Redis), instant turns/s", `×${ceiling}`],
      ['--workers 2 against 2 separate processes (Redis), instant turns/s', `×${ofCeiling}`],
      ...streamRows,
    ],
    metrics: { turns: Object.fromEntries([...byTurns].map(([s, r]) => [s.label, r])), streams: byStreams },
    goals,
    notes: [
      pin
        ? `agentd (one process, or the supervisor and both workers) may use CPUs ${pin.agentd} only, and the load CPUs ${pin.load} only, so --workers 2 has two cores of its own and one process leaves one of them idle.`
        : `${cpuCount} cores hold agentd, redis-server, the simulator and the load generator, so a second worker competes with them for the second core: the ×-factor is what this machine allows, not what N cores would.`,
      '"2 separate processes" are two agentd started without --workers, each with its own key prefix on the same redis-server, the 20 clients alternating between their ports: the same load split over two event loops with no supervisor, no shared sessions and no cluster traffic. Its ratio to one process is the most any --workers design could reach on this machine; --workers 2 against it is what the cluster itself costs.',
      "On Redis (one process or --workers), a session's frames are published on its own channel only while someone listens there (src/cluster/fan-out.ts): a PUBLISH that reached nobody quiets the session until a watcher asks its holder. Before that (2026-11-26), 4 PUBLISHes per instant turn cost about 0.1 ms of agentd's CPU.",
      "The cluster's round robin deals the measured window's connections out afresh, so some clients land on the worker that does not hold their session (it took it during the warm-up): their first turn is forwarded, their second moves the session (a dormant session driven from another instance twice in a row moves there), and the rest run where they land. A turn run where its session is held costs no SUBSCRIBE and no lease round trip (the Redis command counts).",
    ],
  };
}

export const scaleBench: Bench = {
  name: 'scale',
  title: TITLE,
  quick: false,
  async run({ mode, sim, log }) {
    const pin = planPinning(availableParallelism(), process.env.BENCH_SCALE_CPUS);
    const undo: (() => unknown)[] = [];
    try {
      if (pin) {
        log(`  agentd on CPUs ${pin.agentd}; the simulator, redis-server and the load generator on CPUs ${pin.load}`);
        undo.push(pinSelf(pin.load));
      }
      const model = pin ? await startSimulator([], pin.load) : sim;
      if (model !== sim) undo.push(() => model.stop());
      const redis = await startRedisServer(pin?.load);
      undo.push(() => redis.stop());
      return await measure(mode, log, { simUrl: model.url, simPid: model.pid, redis, agentdCpus: pin?.agentd }, pin);
    } finally {
      for (const step of undo.reverse()) await step();
    }
  },
};
