/**
 * Compaction: one session of 10 000 turns (2 000 in quick mode), each calling a tool that returns
 * 2 KB, against a model whose context window is 8 000 tokens (`llm.contextWindow` and the
 * simulator's `[[window:8000]]`, which answers 400 context_length_exceeded past it). The history
 * is compacted as it goes; every turn must be answered, the CPU per turn must not grow with the
 * session's length, and the heap the session holds (measured as what deleting it frees, after a
 * full GC) must stay small.
 */
import { ms, type Bench } from '../lib/bench.ts';
import { httpGet } from '../lib/procs.ts';
import { httpLoad, rawRequest } from '../lib/http-load.ts';
import { cpuWindow, startService } from '../lib/procs.ts';
import { round } from '../lib/stats.ts';
import { freedBetween } from '../lib/heap-snapshot.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const WINDOW = 8000;
const RESULT_BYTES = 2048;
/** Turns per measured segment (CPU per turn is a segment's average: compactions come every few turns). */
const SEGMENT = 100;

export const compactionBench: Bench = {
  name: 'compaction',
  title: 'Compaction: a 10 000-turn session under an 8 000-token window',
  quick: false,
  async run({ mode, sim, log }) {
    const turns = mode === 'full' ? 10_000 : 2_000;
    const svc = await startService({ modelUrl: sim.url, agent: 'bench-compaction.yml' });
    try {
      const session = 'long';
      const message = (k: number) =>
        rawRequest(
          'POST',
          '/api/message-sync',
          JSON.stringify({
            message: `[[window:${WINDOW}]] [[tool:big {"bytes":${RESULT_BYTES}}]] [[reply:Done ${k}.]] turn ${k}`,
            sessionId: session,
          }),
        );
      const perSegment: number[] = [];
      let failures = 0;
      let done = 0;
      const started = performance.now();
      while (done < turns) {
        const cpu = cpuWindow({ agentd: svc.pid });
        const r = await httpLoad({
          port: svc.port,
          connections: 1,
          requestsPerConnection: SEGMENT,
          request: (_c, k) => message(done + k),
          timeoutMs: 30_000,
        });
        failures += r.errors + Object.values(r.statuses).reduce((a, b) => a + b, 0);
        perSegment.push((cpu().cpuMs.agentd ?? 0) / SEGMENT);
        done += SEGMENT;
        if (done % 1000 === 0)
          log(`  ${done} turns: ${round(perSegment.at(-1) ?? 0, 2)} ms CPU per turn, ${failures} failures`);
      }
      const wallMs = performance.now() - started;
      const history = JSON.parse(
        (await httpGet(svc.port, `/api/sessions/${session}/history?since=0`, 60_000))?.body ?? '{}',
      ) as { events?: { event: string; data: Record<string, unknown> }[] };
      const compactions = (history.events ?? []).filter((f) => f.event === 'contextCompacted');
      // Each reading is the lowest of three full GCs in a row: one GC leaves 100-150 KB of garbage
      // (code being flushed, weak references) from one reading to the next.
      const settled = async () => {
        const readings = [];
        for (let i = 0; i < 3; i++) readings.push(await svc.stats());
        return readings.reduce((a, b) => (b.memory.heapUsed < a.memory.heapUsed ? b : a));
      };
      const snapshots = await mkdtemp(join(tmpdir(), 'agentd-heap-'));
      const held = await settled();
      await svc.heapSnapshot(join(snapshots, 'held.heapsnapshot'));
      await httpLoad({
        port: svc.port,
        connections: 1,
        requestsPerConnection: 1,
        request: () => rawRequest('DELETE', `/api/sessions/${session}`),
      });
      const freed = await settled();
      await svc.heapSnapshot(join(snapshots, 'freed.heapsnapshot'));
      const byDelete = await freedBetween(
        join(snapshots, 'held.heapsnapshot'),
        join(snapshots, 'freed.heapsnapshot'),
      ).finally(() => rm(snapshots, { recursive: true, force: true }));
      const heldKb = round((held.memory.heapUsed - freed.memory.heapUsed) / 1024, 1);
      const dataKb = round(byDelete.dataBytes / 1024, 1);
      const codeKb = round(byDelete.codeBytes / 1024, 1);
      const dataTypes = Object.entries(byDelete.dataByType)
        .sort((x, y) => y[1] - x[1])
        .slice(0, 5)
        .map(([t, b]) => `${t} ${round(b / 1024, 1)} KB`)
        .join(', ');
      // Turn 100: the segment after the first (turns 101-200, warm); the end: the last segment.
      const early = perSegment[1] ?? perSegment[0] ?? NaN;
      const late = perSegment.at(-1) ?? NaN;
      const growth = late / early;
      const byTrigger = compactions.reduce<Record<string, number>>(
        (acc, f) => (
          (acc[`${String(f.data.trigger)}/${String(f.data.method)}`] =
            (acc[`${String(f.data.trigger)}/${String(f.data.method)}`] ?? 0) + 1),
          acc
        ),
        {},
      );
      return {
        name: 'compaction',
        title: this.title,
        load: `${turns.toLocaleString('en-US')} message-sync turns in one session, each calling a stdio MCP tool that returns ${RESULT_BYTES / 1024} KB (2 model steps + 1 tool call), model window ${WINDOW.toLocaleString('en-US')} tokens (llm.contextWindow and the simulator's [[window]]), compaction threshold 0.8, keepTurns 2, JSONL store.`,
        rows: [
          ['turns answered / failures', `${turns - failures} / ${failures}`],
          [
            'compactions (trigger/method)',
            Object.entries(byTrigger)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ') || 'none',
          ],
          ['agentd CPU per turn, turns 101-200 → last 100', `${ms(early)} → ${ms(late)} (×${round(growth, 3)})`],
          ['heap freed by deleting the session (heapUsed after GC)', `${heldKb} KB`],
          [
            '— of which data the session held / compiled code (heap snapshots)',
            `${dataKb} KB (${dataTypes}) / ${codeKb} KB`,
          ],
          ['wall time', `${round(wallMs / 1000, 1)} s (${round(wallMs / turns, 1)} ms per turn)`],
        ],
        metrics: {
          turns,
          failures,
          compactions: byTrigger,
          cpuMsPerTurnBySegment: perSegment.map((v) => round(v, 3)),
          heldKb,
          dataKb,
          codeKb,
          dataByType: byDelete.dataByType,
          heapUsedHeld: held.memory.heapUsed,
          heapUsedFreed: freed.memory.heapUsed,
          wallMs: round(wallMs, 0),
        },
        goals: [
          {
            id: 'compaction-answered',
            label: 'Turns not answered',
            target: 0,
            unit: 'turns',
            better: 'lower',
            value: failures,
          },
          {
            id: 'compaction-cpu',
            label: `CPU per turn at turn ${turns.toLocaleString('en-US')} vs turn 100`,
            target: 1.05,
            unit: '×',
            better: 'lower',
            value: round(growth, 3),
            note: "A segment's CPU includes its compactions (a summary request every few turns); noise from other jobs on the machine moves single segments by a few per cent.",
          },
          {
            id: 'compaction-heap',
            label: 'Heap held by the session after GC',
            target: 200,
            unit: 'KB',
            better: 'lower',
            value: dataKb,
            note: "The data deleting the session frees (heap snapshots before and after, compiled code left out: see the notes): its projection since the latest compaction, its actor, the JSONL store's window of its newest events (at most 128 and 64 KiB of their JSON: maxCachedEvents, maxCachedBytes).",
          },
        ],
        notes: [
          'Heap is read after a full GC (the service runs with --expose-gc; the probe calls gc()), the lowest of three readings in a row.',
          "Most of what deleting the session frees is compiled code, not data. Optimized code embeds the objects it was specialized for (the session's, among them) and V8 discards it when they die; it is recompiled for the next session. Its size is bounded by the program's functions, not by the session's length, and with V8's optimizing tiers off (--no-opt --no-maglev) deleting the session frees ~50-80 KB. The goal counts the data: the objects of the first heap snapshot (after a full GC, the session loaded) that the second (after deleting it and a full GC) no longer has, compiled code (snapshot type `code`) left out; the row above it is heapUsed before minus after, code included.",
        ],
      };
    } finally {
      await svc.stop();
    }
  },
};
