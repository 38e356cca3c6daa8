/**
 * Streaming: N WebSocket clients, each streaming replies in its own session, the simulator
 * pacing every reply at a fixed token rate with zero time-to-first-token. The same load is first
 * sent straight to the simulator over SSE; agentd's overhead is the difference.
 */
import { cores, ms, perSec, us, type Bench } from '../lib/bench.ts';
import { startService } from '../lib/procs.ts';
import type { Goal } from '../lib/report.ts';
import { round } from '../lib/stats.ts';
import { agentdStreams, directStreams, type StreamLoad, type StreamResult } from '../lib/streams.ts';

export const TOKENS_PER_SEC = 20;
export const REPLY_TOKENS = 40;
/** Added time-to-first-chunk targets by stream count (issue 41's at 200 and 1 000, the earlier performance issues' at 50 and 500). */
const P50_TARGET: Record<number, number> = { 50: 1.5, 200: 2, 500: 2, 1000: 10 };
const P99_TARGET: Record<number, number> = { 50: 10, 200: 15, 500: 50, 1000: 100 };
/** RSS peak goals by stream count, MB. */
const RSS_TARGET: Record<number, number> = { 500: 250, 1000: 400 };

export function streamingBench(n: number, quick: boolean): Bench {
  return {
    name: `streaming-${n}`,
    title: `Streaming, ${n} concurrent WebSocket sessions`,
    quick,
    async run({ mode, sim, log }) {
      const turnMs = (REPLY_TOKENS / TOKENS_PER_SEC) * 1000;
      const svc = await startService({ modelUrl: sim.url });
      const idleRssMb = round(svc.sample().rssKb / 1024, 1);
      const load: StreamLoad = {
        n,
        message: `[[len:${REPLY_TOKENS}]] [[rate:${TOKENS_PER_SEC}]] stream please`,
        spreadMs: turnMs,
        rampMs: turnMs + 1000,
        measureMs: mode === 'full' ? 8000 : 4000,
        pids: { agentd: svc.pid, simulator: sim.pid },
        rssPid: svc.pid,
      };
      try {
        log(`  direct to the simulator, ${n} SSE streams`);
        const direct = await directStreams(sim.url, load);
        log(`  through agentd, ${n} WebSocket sessions`);
        const agentd = await agentdStreams(svc.wsUrl, load);
        const after = svc.sample();
        // Full runs at 500+ sessions: the same load on the in-memory store, to show what the fsync'd
        // JSONL appends (through the 4-thread libuv pool; a turn's first chunk waits for its user message's) cost.
        let memory: StreamResult | undefined;
        if (mode === 'full' && n >= 500) {
          log('  again with the in-memory store (bench-memory.yml)');
          const mem = await startService({ modelUrl: sim.url, agent: 'bench-memory.yml' });
          memory = await agentdStreams(mem.wsUrl, {
            ...load,
            pids: { agentd: mem.pid, simulator: sim.pid },
            rssPid: mem.pid,
          }).finally(() => mem.stop());
        }
        const addedP50 = round(agentd.ttfc.p50 - direct.ttfc.p50);
        const addedP99 = round(agentd.ttfc.p99 - direct.ttfc.p99);
        const cpuPerChunkUs = ((agentd.cpuMs.agentd ?? 0) * 1000) / Math.max(1, agentd.chunks);
        const mainBusy = (agentd.mainMs.agentd ?? 0) / agentd.wallMs;
        const turnsPerSec = Math.round((agentd.turns / agentd.wallMs) * 1000);
        const limitedBy =
          mainBusy >= 0.75
            ? `agentd is at its limit (main thread ${Math.round(mainBusy * 100)}% busy, ${cores(agentd.cores.agentd)} in all): ~${turnsPerSec} turn starts/s plus ${perSec(agentd.chunksPerSec)} chunks need more than the one core an event loop can use, and every first chunk waits for its user message's fsync'd append in the 4-thread libuv pool (the model request does not), where appends queue`
            : `the event loop is ${Math.round(mainBusy * 100)}% busy, and a turn start waits behind the other sessions' chunks and turn starts`;
        const storeEffect = memory
          ? `; with the in-memory store the same load gets first chunks at p50 ${ms(memory.ttfc.p50)} / p99 ${ms(memory.ttfc.p99)} and ${perSec(memory.chunksPerSec)} chunks (JSONL: ${perSec(agentd.chunksPerSec)})`
          : '';
        const goals: Goal[] = [
          {
            id: `ttfc-p50-${n}`,
            label: `Added time-to-first-chunk p50, ${n} streams`,
            target: P50_TARGET[n] ?? 2,
            unit: 'ms',
            better: 'lower',
            value: addedP50,
            note: `a turn start runs ~1.5–2 ms of service work before and around the model request (ttfc-breakdown: turn machine, tool list, request body, the model connection; the durable append of the user message runs alongside); ${limitedBy}${storeEffect}.`,
          },
        ];
        const p99Target = P99_TARGET[n];
        if (p99Target !== undefined) {
          goals.push({
            id: `ttfc-p99-${n}`,
            label: `Added time-to-first-chunk p99, ${n} streams`,
            target: p99Target,
            unit: 'ms',
            better: 'lower',
            value: addedP99,
            note: `${limitedBy}${storeEffect}.`,
          });
        }
        const rssTarget = RSS_TARGET[n];
        if (rssTarget !== undefined) {
          goals.push({
            id: `rss-${n}`,
            label: `agentd RSS peak at ${n} streams`,
            target: rssTarget,
            unit: 'MB',
            better: 'lower',
            value: agentd.rssPeakMb ?? 0,
            note: `the idle service already holds ${idleRssMb} MB (its code and dependencies), so ${n} streams add ~${Math.round((((agentd.rssPeakMb ?? 0) - idleRssMb) * 1024) / n)} KB each: per open session its turn actor, outbox, history projection and model view, the WebSocket and its buffers, and the model request in flight (its connection and SSE reader), and the JS heap's young generation and free space that grow with the allocation rate.`,
          });
        }
        return {
          name: `streaming-${n}`,
          title: `Streaming, ${n} concurrent WebSocket sessions`,
          load: `${n} sessions, each sending its next message when its reply ends; replies of ${REPLY_TOKENS} pieces at ${TOKENS_PER_SEC} pieces/s (ttft 0); starts spread over ${turnMs} ms; ${load.measureMs / 1000} s window.`,
          rows: [
            ['time to first chunk p50 / p99, through agentd', `${ms(agentd.ttfc.p50)} / ${ms(agentd.ttfc.p99)}`],
            [
              'time to first token p50 / p99, straight to the simulator',
              `${ms(direct.ttfc.p50)} / ${ms(direct.ttfc.p99)}`,
            ],
            ['added by agentd p50 / p99', `${ms(addedP50)} / ${ms(addedP99)}`],
            [
              'inter-chunk delay p50 / p99 (agentd; simulator paces 50 ms)',
              `${ms(agentd.gap.p50)} / ${ms(agentd.gap.p99)}`,
            ],
            ['inter-chunk delay p99 straight to the simulator', ms(direct.gap.p99)],
            [
              'chunks (model pieces)/s received (agentd / direct)',
              `${perSec(agentd.chunksPerSec)} / ${perSec(direct.chunksPerSec)}`,
            ],
            ['turns in window / errors', `${agentd.turns} / ${agentd.errors}`],
            ['agentd CPU (main thread busy)', `${cores(agentd.cores.agentd)} (${Math.round(mainBusy * 100)}%)`],
            ['agentd CPU per chunk (incl. per-turn work, 1 turn per 40 chunks)', us(cpuPerChunkUs)],
            [
              'simulator / load generator / other jobs CPU',
              `${cores(agentd.cores.simulator)} / ${cores(agentd.cores.loadgen)} / ${cores(agentd.cores.other)}`,
            ],
            [
              'agentd RSS idle / peak / after',
              `${idleRssMb} MB / ${agentd.rssPeakMb ?? 0} MB / ${round(after.rssKb / 1024, 1)} MB`,
            ],
            ...(memory
              ? ([
                  [
                    'same load, in-memory store: time to first chunk p50 / p99',
                    `${ms(memory.ttfc.p50)} / ${ms(memory.ttfc.p99)}`,
                  ],
                  [
                    'same load, in-memory store: chunks/s, turns, agentd CPU',
                    `${perSec(memory.chunksPerSec)}, ${memory.turns}, ${cores(memory.cores.agentd)}`,
                  ],
                ] as [string, string][])
              : []),
          ],
          metrics: {
            agentd,
            direct,
            ...(memory && { memoryStore: memory }),
            mainThreadBusy: round(mainBusy, 3),
            addedTtfcMs: { p50: addedP50, p99: addedP99 },
            cpuPerChunkUs: round(cpuPerChunkUs, 1),
            rssAfterMb: round(after.rssKb / 1024, 1),
          },
          goals,
          notes: [
            'Added = percentile through agentd minus the same percentile straight to the simulator, same load, same run.',
          ],
        };
      } finally {
        await svc.stop();
      }
    },
  };
}
