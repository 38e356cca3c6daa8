/**
 * What announcing finished work and resuming turns cost per turn (issue 60): `POST /api/message-sync` against an
 * instant model on three services, alternating short windows so that other jobs hit all alike:
 * - `none`: bench.yml, no webhook (what every turn costs without the feature);
 * - `webhook`: one webhook (`turn.completed`) to a receiver in the bench process answering 204 — a turn's delivery
 *   kept by the webhooks' reaction in the outbox on the record store (group-committed, fsync'd), the reaction's
 *   checkpoint, and the signed POST on a kept-alive connection; a window ends once the receiver got every turn's
 *   delivery, so their CPU is counted in it;
 * - `resume`: `server.resumeTurns: true` — the turn's open mark set and removed;
 * - `memory`: `memory:` on, the caller's memory holding MEMORY_ITEMS items — each turn reads its profile (the kept
 *   fold on the record store, issue 70; before, the owner's whole log was read and folded every turn).
 * And what the `none` side wrote to the outbox (its records in the record store's file): nothing, the goal.
 */
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ms, type Bench } from '../lib/bench.ts';
import { httpLoad, rawRequest, type HttpLoadResult } from '../lib/http-load.ts';
import { cpuWindow, startService, type Service } from '../lib/procs.ts';
import { round, Samples, sleep } from '../lib/stats.ts';

const CONNECTIONS = 4;
/** Items in the `memory` side's memory (saved over REST before the windows). */
const MEMORY_ITEMS = 1000;
const WINDOW_MS = 1000;
/** The record store's file, where the outbox's records (namespaces `outbox.*`) are. */
const RECORDS_FILE = '.agentd-records.jsonl';

/** The bytes of the outbox's records in the record store's file of `dir`. */
const outboxBytesIn = (dir: string): number => {
  const file = join(dir, RECORDS_FILE);
  if (!existsSync(file)) return 0;
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"outbox.'))
    .reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
};

const sync = (sessionId: string) =>
  rawRequest('POST', '/api/message-sync', JSON.stringify({ message: 'hello', sessionId }));

function checked(http: HttpLoadResult): HttpLoadResult {
  if (http.errors || Object.keys(http.statuses).length)
    throw new Error(`message-sync failed: ${http.errors} errors, statuses ${JSON.stringify(http.statuses)}`);
  return http;
}

/** Gives the `memory` side's caller a profile and MEMORY_ITEMS items, over REST. */
async function fillMemory(port: number): Promise<void> {
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}`);
    await res.arrayBuffer();
  };
  await call('PUT', '/api/memory/profile', { text: 'A benchmark user who likes short answers.' });
  for (let i = 0; i < MEMORY_ITEMS; i += 20)
    await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        call('POST', '/api/memory', { text: `Fact number ${i + j} about the user` }),
      ),
    );
}

/** A receiver on loopback that accepts every delivery; how many it got. */
async function receiver() {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    count: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One service's side: agentd CPU, turns and latencies summed over its windows. */
function side(name: string, svc: Service, settled: (turns: number) => Promise<void>) {
  const latency = new Samples();
  let cpuMs = 0;
  let turns = 0;
  return {
    name,
    svc,
    async window(): Promise<void> {
      const cpu = cpuWindow({ agentd: svc.pid });
      const r = checked(
        await httpLoad(
          {
            port: svc.port,
            connections: CONNECTIONS,
            durationMs: WINDOW_MS,
            request: (c) => sync(`${name}-${c}`),
            timeoutMs: 30_000,
          },
          true,
        ),
      );
      turns += r.requests;
      await settled(turns);
      cpuMs += cpu().cpuMs.agentd ?? 0;
      for (const v of r.series ?? []) latency.push(v);
    },
    result: () => ({ turns, cpuMsPerTurn: round(cpuMs / Math.max(1, turns), 3), latency: latency.summary() }),
  };
}

export const turnCostBench: Bench = {
  name: 'turn-cost',
  title: 'What webhooks and turn resumption cost per turn (message-sync, instant model)',
  quick: false,
  async run({ mode, sim, log }) {
    const rounds = mode === 'full' ? 10 : 5;
    const rx = await receiver();
    const services: Service[] = [];
    try {
      const none = await startService({ modelUrl: sim.url });
      services.push(none);
      const hooked = await startService({
        modelUrl: sim.url,
        agent: 'bench-webhook.yml',
        env: { BENCH_WEBHOOK_URL: rx.url },
      });
      services.push(hooked);
      const resume = await startService({ modelUrl: sim.url, agent: 'bench-resume.yml' });
      services.push(resume);
      const recall = await startService({ modelUrl: sim.url, agent: 'bench-recall.yml' });
      services.push(recall);
      await fillMemory(recall.port);
      const nothing = () => Promise.resolve();
      let warmTurns = 0;
      const delivered = async (turns: number) => {
        const deadline = Date.now() + 30_000;
        while (rx.count() < turns + warmTurns && Date.now() < deadline) await sleep(5);
      };
      log('  warm-up');
      for (const svc of services) {
        const r = await httpLoad({
          port: svc.port,
          connections: CONNECTIONS,
          durationMs: 500,
          request: (c) => sync(`w${c}`),
        });
        if (svc === hooked) warmTurns = r.requests;
      }
      await delivered(0);
      const sides = [
        side('none', none, nothing),
        side('webhook', hooked, delivered),
        side('resume', resume, nothing),
        side('memory', recall, nothing),
      ];
      log(`  ${rounds} rounds of ${WINDOW_MS} ms windows per service, alternating`);
      for (let r = 0; r < rounds; r++) for (const s of sides) await s.window();

      const results = Object.fromEntries(sides.map((s) => [s.name, s.result()]));
      const base = results.none?.cpuMsPerTurn ?? NaN;
      const ratio = (name: string) => round((results[name]?.cpuMsPerTurn ?? NaN) / base, 2);
      const outboxBytes = outboxBytesIn(none.dataDir);
      const rows: [string, string][] = sides.map((s) => {
        const r = s.result();
        return [
          `${s.name}: ${r.turns} turns`,
          `agentd CPU ${r.cpuMsPerTurn} ms/turn (×${ratio(s.name)}), p50 ${ms(r.latency.p50)}, p99 ${ms(r.latency.p99)}`,
        ];
      });
      rows.push(['deliveries the receiver got (warm-up included)', String(rx.count())]);
      rows.push(['bytes the service without webhooks wrote to the outbox', String(outboxBytes)]);
      return {
        name: 'turn-cost',
        title: 'What webhooks and turn resumption cost per turn (message-sync, instant model)',
        load: `three services (no webhook; one webhook to a receiver on loopback; server.resumeTurns: true), 0.5 s of warm-up each, then ${rounds} rounds in which each answers message-sync for ${WINDOW_MS} ms on ${CONNECTIONS} keep-alive connections (a session each); the webhook side's window ends once every delivery arrived.`,
        rows,
        metrics: { sides: results, deliveries: rx.count(), outboxBytesWithoutWebhooks: outboxBytes },
        goals: [
          {
            id: 'turn-cost-no-webhooks',
            label: 'Outbox writes of a turn with no webhook',
            target: 0,
            unit: 'bytes',
            better: 'lower',
            value: outboxBytes,
            note: 'with no webhook a stored fact costs the reaction one lookup of an empty map and writes no outbox record (compare the `none` side with a revision before issue 60 with `npm run bench:compare -- <rev> --only turns`).',
          },
          {
            id: 'turn-cost-webhook',
            label: 'agentd CPU per turn, one webhook against none',
            target: 1.3,
            unit: '×',
            better: 'lower',
            value: ratio('webhook'),
          },
          {
            id: 'turn-cost-memory',
            label: `agentd CPU per turn, memory on (${MEMORY_ITEMS} items) against off`,
            target: 1.15,
            unit: '×',
            better: 'lower',
            value: ratio('memory'),
          },
          {
            id: 'turn-cost-resume',
            label: 'agentd CPU per turn, resumption on against off',
            target: 1.15,
            unit: '×',
            better: 'lower',
            value: ratio('resume'),
          },
        ],
        notes: [
          "Before issue 70 (a61db31, this bench copied there, 2026-11-28): webhook ×1.84, memory with 1 000 items ×2.53 (the owner's whole memory log read and folded for every turn's profile); after: webhook ×1.18–1.23, memory ×0.94 (the kept fold: one version read).",
          "A turn with a webhook keeps one delivery record and puts it once sent (group-committed with whatever else is written then: `write` + `fdatasync` ≈ 260 µs of CPU on this VM, bench/README.md), writes its session's reaction checkpoint at most every 5 s, and makes one signed POST with undici's `request` on a connection kept alive to the receiver (issue 69 item 6: ×1.79 before, with a new connection and `fetch` per delivery and a recheck per turn).",
        ],
      };
    } finally {
      for (const svc of services) await svc.stop();
      await rx.close();
    }
  },
};
