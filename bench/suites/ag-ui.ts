/**
 * The AG-UI face against the WebSocket (issue 39): the same long paced replies to N concurrent clients,
 * over the WebSocket (`message` frames, `chunk` frames read) and over `POST /ag-ui` (one run per turn, its
 * SSE events split and classified from their text, never parsed), each run on a fresh service, each side's
 * runs summed. The goal is the ratio of agentd CPU per chunk: per chunk the WebSocket serializes the frame and
 * sends it; AG-UI follows the same frame, folds it into an event (run-view.ts), serializes that and writes
 * it to an HTTP stream through two async iterators, so it may cost up to half as much again.
 */
import { cores, ms, perSec, us, type Bench } from '../lib/bench.ts';
import { startService } from '../lib/procs.ts';
import { agUiEvent, agUiPieces } from '../lib/sse.ts';
import { round } from '../lib/stats.ts';
import { agentdStreams, sseStreams, type StreamLoad, type StreamResult } from '../lib/streams.ts';

const N = 100;
const LEN = 400;
const RATE = 100;
const MESSAGE = `[[len:${LEN}]] [[rate:${RATE}]] stream please`;
/** AG-UI CPU per chunk may be this multiple of the WebSocket's (see the header). */
const GOAL = 1.5;
const SIDES = ['ws', 'ag-ui'] as const;
type Side = (typeof SIDES)[number];
const LABEL: Record<Side, string> = { ws: 'WebSocket', 'ag-ui': 'AG-UI (POST /ag-ui, SSE)' };

/** Client `client`'s `turn`-th run: its thread's user messages so far and a new one (no MESSAGES_SNAPSHOT). */
const runInput = (client: number, turn: number) =>
  JSON.stringify({
    threadId: `agui-${client}`,
    runId: `run-${client}-${turn}`,
    messages: Array.from({ length: turn + 1 }, (_, k) => ({ id: `m${k}`, role: 'user', content: MESSAGE })),
    tools: [],
    context: [],
  });

/** The runs of one side as one: chunks, wall and CPU summed. */
function summed(runs: StreamResult[]) {
  const add = (pick: (r: StreamResult) => Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const r of runs) for (const [k, v] of Object.entries(pick(r))) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const wallMs = runs.reduce((a, r) => a + r.wallMs, 0);
  const chunks = runs.reduce((a, r) => a + r.chunks, 0);
  const cpuMs = add((r) => r.cpuMs);
  return {
    chunks,
    chunksPerSec: (chunks / wallMs) * 1000,
    errors: runs.reduce((a, r) => a + r.errors, 0),
    cpuUsPerChunk: ((cpuMs.agentd ?? 0) * 1000) / Math.max(1, chunks),
    cores: Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, v / wallMs])),
  };
}

export const agUiBench: Bench = {
  name: 'ag-ui',
  title: 'The AG-UI face against the WebSocket (CPU per chunk)',
  quick: true,
  async run({ mode, sim, log }) {
    const turnMs = (LEN / RATE) * 1000;
    // Quick: one run each (~25 s). Full: WebSocket, AG-UI, AG-UI, WebSocket, so drift hits both alike.
    const order: Side[] = mode === 'full' ? ['ws', 'ag-ui', 'ag-ui', 'ws'] : ['ws', 'ag-ui'];
    const measureMs = mode === 'full' ? 6000 : 3000;
    const runs: Record<Side, StreamResult[]> = { ws: [], 'ag-ui': [] };
    for (const [i, side] of order.entries()) {
      log(`  ${LABEL[side]}, run ${i + 1}/${order.length}`);
      const svc = await startService({ modelUrl: sim.url });
      const load: StreamLoad = {
        n: N,
        message: MESSAGE,
        spreadMs: turnMs,
        rampMs: turnMs + 500,
        measureMs,
        pids: { agentd: svc.pid, simulator: sim.pid },
        rssPid: svc.pid,
      };
      const run = await (
        side === 'ws'
          ? agentdStreams(svc.wsUrl, load)
          : sseStreams({ url: `${svc.url}/ag-ui`, body: runInput, classify: agUiEvent, pieces: agUiPieces }, load)
      ).finally(() => svc.stop());
      if (run.errors || !run.chunks) throw new Error(`${side}: ${run.errors} failed turns, ${run.chunks} chunks`);
      runs[side].push(run);
    }
    const total = { ws: summed(runs.ws), 'ag-ui': summed(runs['ag-ui']) };
    const ratio = total['ag-ui'].cpuUsPerChunk / total.ws.cpuUsPerChunk;
    const eachRun = (side: Side, pick: (r: StreamResult) => number) => runs[side].map((r) => ms(pick(r))).join(', ');
    return {
      name: 'ag-ui',
      title: this.title,
      load: `${N} clients, each in its own session streaming replies of ${LEN} pieces at ${RATE} pieces/s (${perSec(N * RATE)} offered), the next message when a reply ends; the WebSocket (message → chunk frames) and POST /ag-ui (a run per turn carrying the thread's user messages, SSE read by a client that splits events without parsing them) on a fresh service each, in the order ${order.join(', ')}, ${measureMs / 1000} s windows, each side's runs summed.`,
      rows: [
        ...SIDES.flatMap((side): [string, string][] => [
          [
            `${LABEL[side]}: agentd CPU per chunk / chunks/s / errors`,
            `${us(total[side].cpuUsPerChunk)} / ${perSec(total[side].chunksPerSec)} / ${total[side].errors}`,
          ],
          [
            '  CPU: agentd / simulator / load generator / other jobs',
            ['agentd', 'simulator', 'loadgen', 'other'].map((k) => cores(total[side].cores[k])).join(' / '),
          ],
          ['  time to first chunk p50 (each run)', eachRun(side, (r) => r.ttfc.p50)],
          ['  inter-chunk delay p99 (each run)', eachRun(side, (r) => r.gap.p99)],
        ]),
        ['AG-UI CPU per chunk / the WebSocket’s', `×${ratio.toFixed(2)}`],
      ],
      metrics: {
        runs,
        ws: { ...total.ws, cpuUsPerChunk: round(total.ws.cpuUsPerChunk, 2) },
        agUi: { ...total['ag-ui'], cpuUsPerChunk: round(total['ag-ui'].cpuUsPerChunk, 2) },
        ratio: round(ratio, 3),
      },
      goals: [
        {
          id: 'ag-ui-vs-ws-per-chunk',
          label: "AG-UI CPU per chunk / the WebSocket's",
          target: GOAL,
          unit: '×',
          better: 'lower',
          value: round(ratio, 2),
          note: `AG-UI ${us(total['ag-ui'].cpuUsPerChunk)} against the WebSocket's ${us(total.ws.cpuUsPerChunk)} per chunk.`,
        },
      ],
      notes: [
        'Both sides pay the model client and the agent per chunk alike; the difference is the delivery. A run also reads its thread (history and questions) and checks its RunAgentInput once per turn, amortized over the reply.',
      ],
    };
  },
};
