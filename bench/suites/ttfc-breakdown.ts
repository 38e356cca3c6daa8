/**
 * Where the time to first chunk goes, for one stream on an otherwise idle service. Unlike the
 * other benchmarks this one runs the service in the bench process (createApp with the bench
 * config, the real uWS server, the separate simulator) so it can timestamp the inside: the bus
 * command, the model request and its response headers (the model client's diagnostics channels,
 * src/llm/http1.ts), the stored user message and the first chunk event. Each moment is taken
 * from the WebSocket frame's send; the model request does not wait for the user message to be
 * stored, so those two overlap. Once with the JSONL store, once in memory.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import { pino } from 'pino';
import WebSocket from 'ws';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { ms, type Bench } from '../lib/bench.ts';
import { noteRuntime, ROOT, scratchDir } from '../lib/procs.ts';
import { round, Samples, type Summary } from '../lib/stats.ts';

const TURNS = 60;
const WARM = 10;
const MARKS = ['command', 'request', 'stored', 'headers', 'chunkEvent', 'client'] as const;
type Mark = (typeof MARKS)[number];
const LABELS: Record<Mark, string> = {
  command: 'agent.sendMessage command (WebSocket frame, rate limit, validation)',
  request: 'model request written (turn machine, tool list, request body)',
  stored: 'user message stored and emitted (store append, in parallel with the request)',
  headers: "model response headers (the socket + the simulator: the model's own time)",
  chunkEvent: 'first chunk on the bus (stream parse, outbox)',
  client: 'first chunk frame at the client (publish, uWS, ws client in the same process)',
};

async function trace(simUrl: string, agent: string): Promise<Record<Mark, Summary>> {
  const config = await loadConfig(join(ROOT, 'bench/agents', agent), {
    ...process.env,
    BENCH_MODEL_URL: simUrl,
    BENCH_DATA_DIR: scratchDir('trace'),
  });
  let marks: Partial<Record<Mark, number>> = {};
  const onCreate = () => void (marks.request ??= performance.now());
  const onHeaders = () => void (marks.headers ??= performance.now());
  subscribe('agentd:model:request', onCreate);
  subscribe('agentd:model:headers', onHeaders);
  const app = createApp(config, { log: pino({ level: 'silent' }) });
  const execute = app.bus.execute.bind(app.bus);
  app.bus.execute = ((name: Parameters<typeof execute>[0], ...rest: unknown[]) => {
    if (name === 'agent.sendMessage') marks.command ??= performance.now();
    return (execute as (...a: unknown[]) => unknown)(name, ...rest);
  }) as typeof app.bus.execute;
  app.bus.on(
    'agent.stored',
    (e) => void (e.payload.event.type === 'userMessage' && (marks.stored ??= performance.now())),
  );
  app.bus.on('agent.chunk', () => void (marks.chunkEvent ??= performance.now()));
  const port = await app.frontEnd.listen('127.0.0.1', 0);
  noteRuntime('in-process', app.frontEnd.engine);
  await app.start();
  const samples = Object.fromEntries(MARKS.map((m) => [m, new Samples()])) as Record<Mark, Samples>;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
  try {
    await new Promise((res, rej) => ws.once('open', res).once('error', rej));
    for (let i = 0; i < TURNS; i++) {
      marks = {};
      const t0 = performance.now();
      const ended = new Promise<void>((res) => {
        const onFrame = (data: Buffer) => {
          if (data.toString('latin1', 10, 15) === 'chunk') marks.client ??= performance.now();
          if (data.toString('latin1', 10, 18) === 'response' || data.toString('latin1', 10, 15) === 'error') {
            ws.off('message', onFrame);
            res();
          }
        };
        ws.on('message', onFrame);
      });
      ws.send(JSON.stringify({ type: 'message', content: '[[len:5]] trace', sessionId: 'trace' }));
      await ended;
      if (i >= WARM) {
        for (const m of MARKS) {
          const at = marks[m];
          if (at === undefined) throw new Error(`ttfc-breakdown: no "${m}" moment in turn ${i}`);
          samples[m].push(at - t0);
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    ws.close();
    unsubscribe('agentd:model:request', onCreate);
    unsubscribe('agentd:model:headers', onHeaders);
    await app.stop();
  }
  return Object.fromEntries(MARKS.map((m) => [m, samples[m].summary()])) as Record<Mark, Summary>;
}

export const ttfcBreakdownBench: Bench = {
  name: 'ttfc-breakdown',
  title: 'Time to first chunk, step by step (one stream, in-process trace)',
  quick: true,
  async run({ sim, log }) {
    log('  JSONL store');
    const jsonl = await trace(sim.url, 'bench.yml');
    log('  memory store');
    const memory = await trace(sim.url, 'bench-memory.yml');
    const rows: [string, string][] = MARKS.map((m) => [LABELS[m], `${ms(jsonl[m].p50)} / ${ms(memory[m].p50)}`]);
    return {
      name: 'ttfc-breakdown',
      title: 'Time to first chunk, step by step (one stream, in-process trace)',
      load: `${TURNS - WARM} sequential turns (after ${WARM} warm-up) in one session, replies of 5 pieces, unpaced; p50 of each moment, in ms after the WebSocket frame was sent, JSONL store / memory store.`,
      rows,
      metrics: { jsonl, memory, firstChunkP50Ms: { jsonl: round(jsonl.client.p50), memory: round(memory.client.p50) } },
      goals: [],
      notes: [
        'The model\'s own time is from "model request created" to "model response headers" (the simulator answers headers and the first piece together); everything else is the service. A chunk never reaches the client before the user message is stored.',
        "Diagnostic: the service runs inside the bench process here, so the last step includes the `ws` client's work.",
      ],
    };
  },
};
