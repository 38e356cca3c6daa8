/**
 * The result of `npm run bench:peers` in the shape every benchmark writes (bench/results/peers.json,
 * and its section of bench/README.md): the side-by-side table, the versions, the pinning, the
 * machine's load before and after, every window's figures, and the goal measured against the stub.
 */
import type { MachineLoad } from '../lib/speed.ts';
import type { BenchResult, Goal } from '../lib/report.ts';
import { median } from '../lib/compare-table.ts';
import { measures, num, peerTable, type PeerRounds, type TurnsWindow } from './table.ts';
import type { MastraVersions } from './mastra.ts';

export interface PeerRun {
  rounds: PeerRounds;
  load: { clients: number; turnsMs: number; streams: number; streamMeasureMs: number; message: string; rounds: number };
  /** The CPUs asked for, and those each process was allowed (/proc/<pid>/status) once started. */
  cpus: { servers: string; loadgen: string; allowed: Record<string, string> };
  versions: { agentd: string; mastra: MastraVersions; node: string };
  engine: string;
  machineLoad: { before: MachineLoad; after: MachineLoad };
}

/** The share of the stub's turns/s agentd must reach (issue 41's goal). */
const SHARE_TARGET = 25;

/** Whether a Node version (`v20.20.2`) is older than major.minor. */
const olderThan = (version: string, [major, minor]: [number, number]) => {
  const [a = 0, b = 0] = version.replace(/^v/, '').split('.').map(Number);
  return a < major || (a === major && b < minor);
};
const latency = (ws: TurnsWindow[]) => `${num(median(ws.map((w) => w.p50)))} / ${num(median(ws.map((w) => w.p99)))} ms`;
const list = (values: number[]) => values.map(num).join(', ');
const loadLine = (l: MachineLoad) => `load average ${l.loadavg.join(', ')} (1, 5, 15 min), ${l.busyCores} cores busy`;

export function peerResult(run: PeerRun): BenchResult {
  const { rounds: r, load, versions } = run;
  const all = measures(r, { clients: load.clients, streams: load.streams });
  const peer = `Mastra ${versions.mastra['@mastra/core']}`;
  const byId = (id: string) => all.find((m) => m.id === id)!;
  const share = median(byId('turns-share-of-stub').agentd);
  const cpu = byId('cpu-per-turn');
  const goals: Goal[] = [
    {
      id: 'turns-share-of-stub',
      label: 'instant turns/s against the model stub alone on the same core',
      target: SHARE_TARGET,
      unit: '%',
      better: 'higher',
      value: Math.round(share * 10) / 10,
      note: `agentd spends ${num(median(cpu.agentd))} ms of CPU per turn where the stub spends ${num(median(cpu.stub ?? []))} ms per answer (bench:peers; where a turn's CPU goes: the \`turns\` profile).`,
    },
  ];
  const other = Math.max(
    ...[...Object.values(r.turns), ...Object.values(r.streams)].flat().map((w) => w.cores.other ?? 0),
  );
  const medianCores = (ws: { cores: Record<string, number> }[], k: string) =>
    num(median(ws.map((w) => w.cores[k] ?? 0)));
  const errors = (ws: { errors: number }[]) => ws.reduce((a, w) => a + w.errors, 0);
  const m = versions.mastra;
  return {
    name: 'peers',
    title: `Side by side: agentd and ${peer}, each on one core, the same model stub`,
    load: `Each server pinned to CPU ${run.cpus.servers} (taskset -c), the model simulator and the load generator on CPU ${run.cpus.loadgen}; ${load.rounds} round(s) of windows alternating agentd and Mastra (A B, B A, …). Instant turns: ${load.clients} keep-alive clients for ${load.turnsMs / 1000} s per window (agentd POST /api/message-sync, one session per client and round; Mastra POST /api/agents/bench/generate; the stub alone: chat completions from a second simulator pinned to CPU ${run.cpus.servers}). Streams: ${load.streams} clients, each sending its next message when its reply ends (\`${load.message}\`), ${load.streamMeasureMs / 1000} s window; agentd over its WebSocket, Mastra over its SSE stream; first the same load straight to the simulator.`,
    table: peerTable(all, peer, load.rounds),
    rows: [
      [
        'versions',
        `agentd ${versions.agentd}; @mastra/core ${m['@mastra/core']}, @mastra/hono ${m['@mastra/hono']} (@mastra/server ${m['@mastra/server']}), hono ${m.hono}, @hono/node-server ${m['@hono/node-server']}; Node ${versions.node} for both`,
      ],
      [
        'how they ran',
        `agentd: node bin/agentd.js, HTTP engine ${run.engine}, JSONL store; Mastra: node dist/server.mjs (bench/peers/mastra-app, bundled), NODE_ENV=production`,
      ],
      [
        'CPUs allowed (/proc)',
        Object.entries(run.cpus.allowed)
          .map(([k, v]) => `${k} ${v}`)
          .join(', '),
      ],
      [
        'machine load before the run; after it',
        `${loadLine(run.machineLoad.before)}; ${loadLine(run.machineLoad.after)}`,
      ],
      ['other jobs during the windows (most)', `${num(other)} cores`],
      [
        'instant turns/s per window: agentd / Mastra / stub',
        `${list(r.turns.agentd.map((w) => w.turnsPerSec))} / ${list(r.turns.peer.map((w) => w.turnsPerSec))} / ${list(r.turns.stub.map((w) => w.turnsPerSec))}`,
      ],
      [
        'instant turn latency p50 / p99 (median)',
        `agentd ${latency(r.turns.agentd)}; Mastra ${latency(r.turns.peer)}; the stub ${latency(r.turns.stub)}`,
      ],
      [
        'first chunk p50 / p99 per window: straight to the simulator',
        r.streams.direct.map((w) => `${num(w.ttfcP50)} / ${num(w.ttfcP99)} ms`).join(', '),
      ],
      [
        'first chunk p50 / p99 per window: agentd',
        r.streams.agentd.map((w) => `${num(w.ttfcP50)} / ${num(w.ttfcP99)} ms`).join(', '),
      ],
      [
        'first chunk p50 / p99 per window: Mastra',
        r.streams.peer.map((w) => `${num(w.ttfcP50)} / ${num(w.ttfcP99)} ms`).join(', '),
      ],
      [
        'chunks/s (median): direct / agentd / Mastra',
        `${num(median(r.streams.direct.map((w) => w.chunksPerSec)))} / ${num(median(r.streams.agentd.map((w) => w.chunksPerSec)))} / ${num(median(r.streams.peer.map((w) => w.chunksPerSec)))}`,
      ],
      [
        'server cores busy (median): turns agentd / Mastra / stub; streams agentd / Mastra',
        `${medianCores(r.turns.agentd, 'server')} / ${medianCores(r.turns.peer, 'server')} / ${medianCores(r.turns.stub, 'server')}; ${medianCores(r.streams.agentd, 'server')} / ${medianCores(r.streams.peer, 'server')}`,
      ],
      [
        'simulator / load generator cores during streams (median): agentd / Mastra',
        `${medianCores(r.streams.agentd, 'simulator')} / ${medianCores(r.streams.agentd, 'loadgen')}; ${medianCores(r.streams.peer, 'simulator')} / ${medianCores(r.streams.peer, 'loadgen')}`,
      ],
      [
        'errors: turns agentd / Mastra / stub; streams agentd / Mastra',
        `${errors(r.turns.agentd)} / ${errors(r.turns.peer)} / ${errors(r.turns.stub)}; ${errors(r.streams.agentd)} / ${errors(r.streams.peer)}`,
      ],
    ],
    metrics: { ...run, measures: all },
    goals,
    notes: [
      "agentd's lead: Mastra ÷ agentd for costs (CPU, latency, memory), agentd ÷ Mastra for turns/s; above ×1 agentd is ahead. Added first chunk: a server's percentile minus the same percentile straight to the simulator in the same round.",
      "What each server does per turn differs as shipped: agentd appends every message to its JSONL store (durable writes) and sends the session's history to the model; the Mastra agent has no memory configured (Mastra falls back to its in-memory store) and sends only the request's message. Both answer over loopback from the same simulator.",
      ...(olderThan(versions.node, [22, 13])
        ? [
            `Mastra declares Node >= 22.13 (@mastra/core's engines); it ran here on the machine's Node ${versions.node}, as agentd did.`,
          ]
        : []),
      'Rerun: npm run build && npm run bench:peers (see Running). Ratios are of one run: compare runs of different days only with the machine speed and load beside them.',
    ],
  };
}
