/**
 * The three model APIs side by side (issue 38): the same agent on `chat`, `responses` and
 * `messages` (bench/agents/bench-<api>.yml) against the same simulator. CPU per turn from instant
 * `message-sync` turns at 20 clients, the three services interleaved in small batches so drift and
 * other jobs hit them alike; CPU per chunk from streamed replies (each service alone, fresh), two
 * rounds in rotated order, of each API's two the one that delivered more chunks (other jobs on the
 * shared machine starve a run now and then).
 * The goal: no adapter costs more than Chat Completions (within the machine's ±10 % run-to-run noise).
 */
import { cores, ms, perSec, us, type Bench } from '../lib/bench.ts';
import { httpLoad, rawRequest } from '../lib/http-load.ts';
import { cpuWindow, startService, type Service } from '../lib/procs.ts';
import { round } from '../lib/stats.ts';
import { agentdStreams, type StreamResult } from '../lib/streams.ts';

const APIS = ['chat', 'responses', 'messages'] as const;
type Api = (typeof APIS)[number];
const AGENT: Record<Api, string> = {
  chat: 'bench.yml',
  responses: 'bench-responses.yml',
  messages: 'bench-messages.yml',
};
const sync = (sessionId: string) =>
  rawRequest('POST', '/api/message-sync', JSON.stringify({ message: 'hello', sessionId }));
/** Within this ratio of chat's cost an adapter costs the same (the VM's run-to-run noise). */
const SAME = 1.1;

interface TurnSide {
  turns: number;
  cpuMs: number;
  p50: number[];
}

export const apisBench: Bench = {
  name: 'apis',
  title: 'Model APIs side by side: chat, responses, messages (CPU per turn and per chunk)',
  quick: false,
  async run({ mode, sim, log }) {
    const rounds = mode === 'full' ? 6 : 3;
    const batchMs = 1000;
    const services = {} as Record<Api, Service>;
    const turns: Record<Api, TurnSide> = {
      chat: { turns: 0, cpuMs: 0, p50: [] },
      responses: { turns: 0, cpuMs: 0, p50: [] },
      messages: { turns: 0, cpuMs: 0, p50: [] },
    };
    try {
      for (const api of APIS) services[api] = await startService({ modelUrl: sim.url, agent: AGENT[api] });
      log('  warm-up');
      for (const api of APIS)
        await httpLoad({
          port: services[api].port,
          connections: 20,
          durationMs: 1000,
          request: (c) => sync(`${api}-${c}`),
        });
      for (let r = 0; r < rounds; r++) {
        log(`  turns, round ${r + 1}/${rounds}`);
        // Each round takes the APIs in another order.
        for (const api of [...APIS.slice(r % 3), ...APIS.slice(0, r % 3)]) {
          const cpu = cpuWindow({ agentd: services[api].pid });
          const http = await httpLoad({
            port: services[api].port,
            connections: 20,
            durationMs: batchMs,
            timeoutMs: 30_000,
            request: (c) => sync(`${api}-${r}-${c}`),
          });
          if (http.errors || Object.keys(http.statuses).length)
            throw new Error(
              `${api}: message-sync failed: ${http.errors} errors, statuses ${JSON.stringify(http.statuses)}`,
            );
          turns[api].cpuMs += cpu().cpuMs.agentd ?? 0;
          turns[api].turns += http.requests;
          turns[api].p50.push(http.latency.p50);
        }
      }
    } finally {
      await Promise.all(Object.values(services).map((s) => s.stop()));
    }
    const streams = {} as Record<Api, StreamResult>;
    const cpuPerChunk = (run: StreamResult) => ((run.cpuMs.agentd ?? 0) * 1000) / Math.max(1, run.chunks);
    for (let r = 0; r < 2; r++) {
      for (const api of r === 0 ? APIS : [...APIS].reverse()) {
        log(`  chunks: ${api}, round ${r + 1}/2`);
        const svc = await startService({ modelUrl: sim.url, agent: AGENT[api] });
        const run = await agentdStreams(svc.wsUrl, {
          n: 100,
          message: '[[len:400]] [[rate:100]] stream please',
          spreadMs: 4000,
          rampMs: 4500,
          measureMs: mode === 'full' ? 6000 : 3000,
          pids: { agentd: svc.pid, simulator: sim.pid },
          rssPid: svc.pid,
        }).finally(() => svc.stop());
        // The run other jobs starved less (more of the offered chunks delivered) is kept.
        const kept = streams[api];
        if (!kept || run.chunksPerSec > kept.chunksPerSec) streams[api] = run;
      }
    }
    const perTurn = (api: Api) => turns[api].cpuMs / Math.max(1, turns[api].turns);
    const perChunk = (api: Api) => cpuPerChunk(streams[api]);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;
    const ratioGoal = (api: Api, what: 'turn' | 'chunk') => {
      const value = what === 'turn' ? perTurn(api) / perTurn('chat') : perChunk(api) / perChunk('chat');
      return {
        id: `${api}-vs-chat-per-${what}`,
        label: `${api} CPU per ${what} / chat's`,
        target: SAME,
        unit: '×',
        better: 'lower' as const,
        value: round(value, 2),
        note: `${api} ${what === 'turn' ? ms(perTurn(api)) : us(perChunk(api))} against chat ${what === 'turn' ? ms(perTurn('chat')) : us(perChunk('chat'))} per ${what}.`,
      };
    };
    return {
      name: 'apis',
      title: this.title,
      load: `Three services (bench.yml on llm.api chat, responses, messages), one simulator. Turns: instant message-sync at 20 clients, ${rounds} interleaved rounds of ${batchMs / 1000} s per API, each round in new sessions. Chunks: 100 WebSocket sessions, replies of 400 pieces at 100 pieces/s, one API at a time on a fresh service, two rounds (the one delivering more chunks kept).`,
      rows: [
        ...APIS.map((api): [string, string] => [
          `${api}: agentd CPU per turn / turns/s / latency p50`,
          `${ms(perTurn(api))} / ${perSec(turns[api].turns / ((rounds * batchMs) / 1000))} / ${ms(median(turns[api].p50))}`,
        ]),
        ...APIS.map((api): [string, string] => [
          `${api}: agentd CPU per chunk / chunks/s / CPU`,
          `${us(perChunk(api))} / ${perSec(streams[api].chunksPerSec)} / ${cores(streams[api].cores.agentd)}`,
        ]),
      ],
      metrics: {
        turns: Object.fromEntries(APIS.map((api) => [api, { ...turns[api], cpuMsPerTurn: round(perTurn(api), 3) }])),
        chunks: Object.fromEntries(
          APIS.map((api) => [api, { ...streams[api], cpuUsPerChunk: round(perChunk(api), 2) }]),
        ),
      },
      goals: [
        ratioGoal('responses', 'turn'),
        ratioGoal('messages', 'turn'),
        ratioGoal('responses', 'chunk'),
        ratioGoal('messages', 'chunk'),
      ],
      notes: [
        "The Messages service pays for prompt caching breakpoints (on by default); the simulator, not agentd, computes the cache figures. Every adapter keeps the history's encoded bytes between turns (src/llm/request-body.ts).",
      ],
    };
  },
};
