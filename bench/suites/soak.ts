/**
 * Soak: 10 000 turns with a tool call each (model → `big` tool over stdio MCP, 100 KB result → model), 20
 * clients in 20 sessions, each session reset every 50 turns so history stays bounded. After each
 * 1000 turns the bench probe reports heap after a full GC, bus listener counts and open handles;
 * none may grow once warm.
 */
import { cores, ms, perSec, type Bench } from '../lib/bench.ts';
import { httpLoad, rawRequest } from '../lib/http-load.ts';
import { cpuWindow, dirBytes, startService, type ProbeStats } from '../lib/procs.ts';
import { round } from '../lib/stats.ts';

const CLIENTS = 20;
const TURNS = 10_000;
const SEGMENT = 1000;
/** Bytes of each tool result (the `big` tool of the echo fixture). */
const RESULT_BYTES = 100_000;

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** Handle types of a socket still closing: the load generator has just closed its connections. */
const CLOSING = ['ShutdownWrap', 'SimpleShutdownWrap'];

/**
 * The probe's stats once the connections the load generator closed are gone: read again (up to 5 s, every
 * 100 ms) while a socket is still shutting down, so a checkpoint counts handles at rest, not closes in flight.
 * A handle that never closes still counts.
 */
async function statsAtRest(read: () => Promise<ProbeStats>): Promise<ProbeStats> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const stats = await read();
    if (!CLOSING.some((type) => stats.handles[type]) || Date.now() > deadline) return stats;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const soakBench: Bench = {
  name: 'soak',
  title: 'Soak: 10 000 turns with tool calls',
  quick: false,
  async run({ sim, log }) {
    const svc = await startService({ modelUrl: sim.url, agent: 'bench-tools.yml' });
    try {
      const message = (c: number) =>
        rawRequest(
          'POST',
          '/api/message-sync',
          JSON.stringify({
            message: `[[tool:big {"bytes":${RESULT_BYTES}}]] [[reply:Done.]] use the tool`,
            sessionId: `soak-${c}`,
          }),
        );
      const reset = (c: number) => rawRequest('POST', '/api/reset', JSON.stringify({ sessionId: `soak-${c}` }));
      const checkpoints: {
        turns: number;
        heapMb: number;
        rssMb: number;
        jsonlMb: number;
        listeners: number;
        handles: number;
        handleTypes: Record<string, number>;
        stats: ProbeStats;
      }[] = [];
      const latencies: number[] = [];
      const cpu = cpuWindow({ agentd: svc.pid, simulator: sim.pid });
      let failures = 0;
      for (let done = 0; done < TURNS; done += SEGMENT) {
        const r = await httpLoad({
          port: svc.port,
          connections: CLIENTS,
          requestsPerConnection: SEGMENT / CLIENTS,
          request: (c) => message(c),
          timeoutMs: 30_000,
        });
        failures += r.errors + total(r.statuses);
        latencies.push(r.latency.p99);
        await httpLoad({ port: svc.port, connections: CLIENTS, requestsPerConnection: 1, request: (c) => reset(c) });
        const stats = await statsAtRest(() => svc.stats());
        const point = {
          turns: done + SEGMENT,
          heapMb: round(stats.memory.heapUsed / 2 ** 20, 2),
          rssMb: round(stats.memory.rss / 2 ** 20, 1),
          jsonlMb: round(dirBytes(svc.dataDir) / 2 ** 20, 2),
          listeners: total(stats.listeners),
          handles: total(stats.handles),
          handleTypes: stats.handles,
          stats,
        };
        checkpoints.push(point);
        log(
          `  ${point.turns} turns: heap ${point.heapMb} MB, rss ${point.rssMb} MB, listeners ${point.listeners}, handles ${point.handles}, p99 ${ms(r.latency.p99)}`,
        );
      }
      const { wallMs, cpuMs } = cpu();
      // The first segment warms up (JIT, pools, sessions); growth is measured from its end.
      const base = checkpoints[1] ?? checkpoints[0]!;
      const last = checkpoints.at(-1)!;
      const heapGrowth = last.heapMb / base.heapMb;
      const turnsBetween = last.turns - base.turns;
      const heapPerTurnKb = ((last.heapMb - base.heapMb) * 1024) / turnsBetween;
      const jsonlPerTurnKb = ((last.jsonlMb - base.jsonlMb) * 1024) / turnsBetween;
      return {
        name: 'soak',
        title: 'Soak: 10 000 turns with tool calls',
        load: `${TURNS.toLocaleString('en-US')} message-sync turns, each calling a tool on a stdio MCP server that returns ${RESULT_BYTES / 1000} KB (2 model steps + 1 tool call), ${CLIENTS} clients in ${CLIENTS} sessions, each session reset every ${SEGMENT / CLIENTS} turns.`,
        rows: [
          ['turns/s, failures', `${perSec((TURNS / wallMs) * 1000)}, ${failures}`],
          [
            'agentd CPU per tool turn / simulator',
            `${round((cpuMs.agentd ?? 0) / TURNS, 2)} ms (${cores((cpuMs.agentd ?? 0) / wallMs)}) / ${cores((cpuMs.simulator ?? 0) / wallMs)}`,
          ],
          ['heap after GC at 2 000 → 10 000 turns', `${base.heapMb} → ${last.heapMb} MB (×${round(heapGrowth, 3)})`],
          [
            'heap growth per turn vs JSONL bytes written per turn',
            `${round(heapPerTurnKb, 2)} KB vs ${round(jsonlPerTurnKb, 2)} KB`,
          ],
          ['RSS at 2 000 → 10 000 turns', `${base.rssMb} → ${last.rssMb} MB`],
          ['bus listeners at 2 000 → 10 000 turns', `${base.listeners} → ${last.listeners}`],
          [
            'open handles at 2 000 → 10 000 turns',
            `${base.handles} → ${last.handles} (${Object.entries(last.handleTypes)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`,
          ],
          ['p99 per 1 000 turns, first → last', `${ms(latencies[0] ?? NaN)} → ${ms(latencies.at(-1) ?? NaN)}`],
          ['heap after GC per checkpoint (MB)', checkpoints.map((c) => c.heapMb).join(', ')],
        ],
        metrics: {
          checkpoints: checkpoints.map(({ stats: _s, ...c }) => c),
          heapPerTurnKb: round(heapPerTurnKb, 3),
          jsonlPerTurnKb: round(jsonlPerTurnKb, 3),
          failures,
          wallMs: round(wallMs, 0),
          cpuMs,
          heapGrowth: round(heapGrowth, 3),
          p99ByThousand: latencies,
        },
        goals: [
          {
            id: 'soak-heap',
            label: 'Heap after GC across the soak (2 000 → 10 000 turns)',
            target: 1.05,
            unit: '×',
            better: 'lower',
            value: round(heapGrowth, 3),
            note: `heap grows ${round(heapPerTurnKb, 2)} KB per turn while each turn appends ${round(jsonlPerTurnKb, 1)} KB to the session files. What a session holds is bounded: the JSONL store keeps its newest events per session (at most 128 and 64 KiB of their JSON), the history projection drops its messages at each reset, and a turn's machine (with its tool calls and results) is stopped when the turn ends. Growth means one of these bounds broke: compare heap snapshots.`,
          },
          {
            id: 'soak-listeners',
            label: 'Bus listener growth across the soak',
            target: 0,
            unit: 'listeners',
            better: 'lower',
            value: last.listeners - base.listeners,
          },
          {
            id: 'soak-handles',
            label: 'Open handle growth across the soak',
            target: 0,
            unit: 'handles',
            better: 'lower',
            value: last.handles - base.handles,
          },
        ],
        notes: ['Heap is read after a full GC (the service runs with --expose-gc; the probe calls gc()).'],
      };
    } finally {
      await svc.stop();
    }
  },
};
