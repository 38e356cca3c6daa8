/**
 * A2A `ListTasks` against the number of sessions: the same pages over a JSONL store of 10 sessions and
 * one of 10 000 (ten finished turns each, all at one time, written straight into the store before agentd starts), a
 * service on each: first the cold call (turn indexes and the store's index by update time not built yet), then closed loops of first pages
 * and of a later page (its page token), the two services alternating in short windows so that other
 * jobs on the machine hit both alike.
 */
import { pino } from 'pino';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createJsonlStore } from '../../src/store/jsonl-store.ts';
import { ms, perSec, type Bench } from '../lib/bench.ts';
import { httpLoad, rawRequest } from '../lib/http-load.ts';
import { cpuWindow, scratchDir, startService, type Service } from '../lib/procs.ts';
import { round, Samples, sleep } from '../lib/stats.ts';

const SIZES = [10, 10_000] as const;
const PAGE = 50;
const TURNS = 10;
const WINDOW_MS = 400;
const SETTLE_MS = 1100;

/** A store of `n` sessions of `TURNS` finished turns each. */
async function fill(dir: string, n: number): Promise<void> {
  const store = createJsonlStore<SessionEvent>({
    dir,
    log: pino({ level: 'silent' }),
    parseEvent: parseSessionEvent,
    fsync: false,
    maxCachedSessions: 16,
  });
  const ts = '2026-01-01T00:00:00.000Z';
  const log = Array.from({ length: TURNS }, (_, t): SessionEvent[] => [
    { v: 4, type: 'userMessage', turnId: `turn-${t}`, content: `question ${t}` },
    { v: 4, type: 'response', turnId: `turn-${t}`, content: `answer ${t}`, text: `answer ${t}`, model: 'sim-model' },
  ])
    .flat()
    .map((event, i) => ({ seq: i + 1, ts, event }));
  for (let i = 0; i < n; i += 64) {
    await Promise.all(
      Array.from({ length: Math.min(64, n - i) }, (_, k) =>
        store.create(`bench-${String(i + k).padStart(6, '0')}`, log),
      ),
    );
  }
  await store.close();
}

const body = (params: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params });
const listTasks = (params: Record<string, unknown>) =>
  rawRequest('POST', '/a2a', body(params), { 'A2A-Version': '1.0' });

/** One ListTasks call: how long it took, and its result. */
async function ask(
  port: number,
  params: Record<string, unknown>,
): Promise<{ wallMs: number; result: { tasks: unknown[]; nextPageToken: string } }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/a2a`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: body(params),
  });
  const answer = (await res.json()) as { result?: { tasks: unknown[]; nextPageToken: string } };
  if (!answer.result || answer.result.tasks.length !== PAGE)
    throw new Error(`ListTasks answered ${JSON.stringify(answer).slice(0, 200)}`);
  return { wallMs: performance.now() - started, result: answer.result };
}

/** Requests, latencies and agentd CPU summed over the windows of one kind of page on one service. */
class Tally {
  requests = 0;
  cpuMs = 0;
  wallMs = 0;
  latency = new Samples();
  /** agentd CPU per request of each window (µs). */
  windows: number[] = [];
  async window(svc: Service, params: Record<string, unknown>): Promise<void> {
    const cpu = cpuWindow({ agentd: svc.pid });
    const r = await httpLoad(
      { port: svc.port, connections: 4, durationMs: WINDOW_MS, request: () => listTasks(params), timeoutMs: 10_000 },
      true,
    );
    const used = cpu();
    this.requests += r.requests;
    this.cpuMs += used.cpuMs.agentd ?? 0;
    this.wallMs += r.wallMs;
    this.windows.push(((used.cpuMs.agentd ?? 0) * 1000) / Math.max(1, r.requests));
    for (const v of r.series ?? []) this.latency.push(v);
  }
  get cpuUsPerRequest(): number {
    return round((this.cpuMs * 1000) / Math.max(1, this.requests), 1);
  }
  row(): string {
    const l = this.latency.summary();
    return `${perSec((this.requests * 1000) / Math.max(1, this.wallMs))}, p50 ${ms(l.p50)}, p99 ${ms(l.p99)}, agentd CPU ${this.cpuUsPerRequest} µs/request`;
  }
}

export const listTasksBench: Bench = {
  name: 'list-tasks',
  title: 'A2A ListTasks against the number of sessions',
  quick: true,
  async run({ mode, sim, log }) {
    const rounds = mode === 'full' ? 10 : 5;
    const services: Service[] = [];
    try {
      const sides = [];
      for (const sessions of SIZES) {
        const dir = scratchDir(`tasks-${sessions}`);
        log(`  writing ${sessions} sessions`);
        await fill(dir, sessions);
        const svc = await startService({ modelUrl: sim.url, env: { BENCH_DATA_DIR: dir } });
        services.push(svc);
        const cold = await ask(svc.port, { pageSize: PAGE });
        const later = { pageSize: PAGE, pageToken: cold.result.nextPageToken };
        await ask(svc.port, later);
        sides.push({ sessions, svc, coldMs: round(cold.wallMs, 2), later, first: new Tally(), next: new Tally() });
      }
      // The JSONL store reads its directory again while it changed less than a second ago (agentd's start writes
      // to it): past that, one listing keeps it. Then a short warm-up, not counted.
      await sleep(SETTLE_MS);
      for (const side of sides)
        await httpLoad({
          port: side.svc.port,
          connections: 4,
          durationMs: 500,
          request: () => listTasks({ pageSize: PAGE }),
        });
      log(`  ${rounds} rounds of ${WINDOW_MS} ms windows per page and service, alternating`);
      for (let r = 0; r < rounds; r++) {
        for (const side of sides) {
          await side.first.window(side.svc, { pageSize: PAGE });
          await side.next.window(side.svc, side.later);
        }
      }
      const [few, many] = sides as [(typeof sides)[number], (typeof sides)[number]];
      // The median of the rounds' ratios: a round's two windows are close in time, so other jobs hit both alike.
      const ratios = many.first.windows.map((v, i) => v / Math.max(1, few.first.windows[i] ?? 0)).sort((a, b) => a - b);
      const ratio = round(ratios[Math.floor(ratios.length / 2)] ?? NaN, 2);
      const rows: [string, string][] = sides.flatMap((s): [string, string][] => [
        [
          `${s.sessions.toLocaleString('en-US')} sessions — first call (turn indexes and the index by update time built)`,
          ms(s.coldMs),
        ],
        [`  first page (${PAGE} tasks), 4 connections`, s.first.row()],
        ['  the second page (its page token)', s.next.row()],
      ]);
      rows.push([
        'agentd CPU per first page: 10 000 sessions against 10 (median of the rounds)',
        `×${ratio} (rounds: ${ratios.map((r) => `×${r.toFixed(2)}`).join(', ')})`,
      ]);
      return {
        name: 'list-tasks',
        title: 'A2A ListTasks against the number of sessions',
        load: `a JSONL store of ${SIZES.join(' and ')} sessions (${TURNS} finished turns each, written before agentd starts; no auth, so the caller sees every session), pages of ${PAGE} tasks; a service per store, the first call on each, ${SETTLE_MS / 1000} s idle (the JSONL store keeps its directory's listing once it has not changed for a second), 0.5 s of first pages on each (not counted), then ${rounds} rounds in which each service answers first pages, then second pages, for ${WINDOW_MS} ms each on 4 keep-alive connections.`,
        rows,
        metrics: {
          sides: sides.map(({ svc: _svc, first, next, ...s }) => ({
            ...s,
            first: {
              requests: first.requests,
              cpuUsPerRequest: first.cpuUsPerRequest,
              latency: first.latency.summary(),
            },
            next: { requests: next.requests, cpuUsPerRequest: next.cpuUsPerRequest, latency: next.latency.summary() },
          })),
        },
        goals: [
          {
            id: 'list-tasks-flat',
            label: 'ListTasks CPU per page, 10 000 sessions against 10',
            target: 1.25,
            unit: '×',
            better: 'lower',
            value: ratio,
            note: "a page reads the same sessions and turns at either size (in process, without HTTP, a page costs the same at both); what is left is the service's garbage collection: reading the listing of 10 000 files once makes V8 grow its young generation, and the same work then costs more (with `--max-semi-space-size=2` the two sizes come within 10 %).",
          },
        ],
        notes: [
          "A page reads the turns it answers through the sessions' turn indexes (`src/agent/follow/turn-pages.ts`); before them, every ListTasks read every history the caller could see: at `a6e9a2b`, over the same two stores, one call took 3–8 ms at 10 sessions and 10–14 s at 10 000 (measured by hand, five calls each).",
        ],
      };
    } finally {
      for (const svc of services) await svc.stop();
    }
  },
};
