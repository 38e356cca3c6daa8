/**
 * Streaming load, two ways with the same shape: N clients, each with its own conversation, each
 * sending the next message as soon as the previous answer ends; starts are spread over `rampMs`
 * so the load is steady rather than a thundering herd. Only turns that start inside the
 * measurement window count; chunks are counted by arrival inside the window, as the model's pieces they
 * carry (agentd sends the pieces of one network read as one frame: `frames` counts the frames).
 *
 * - `agentdStreams`: WebSocket clients of the service (send `message`, read `chunk` frames).
 * - `directStreams`: SSE clients straight to the simulator, the baseline the service's overhead
 *   is measured against (same message, same pacing directives).
 * - `sseStreams`: SSE clients of any endpoint that streams one turn per POST (a peer's, AG-UI's).
 */
import http from 'node:http';
import type WebSocket from 'ws';
import { cpuWindow, rssPeak } from './procs.ts';
import { openAiEvent, sseSplitter, type SseKind } from './sse.ts';
import { Samples, round, sleep, type Summary } from './stats.ts';
import { closeSockets, eventOf, fillerPieces, openSockets } from './ws-load.ts';

export interface StreamLoad {
  n: number;
  /** The user message (carries the simulator's pacing directives). */
  message: string;
  /** Client starts are spread over this long (about one turn, for a steady load). */
  spreadMs: number;
  /** Time from the first start to the measurement window (spread + warm-up). */
  rampMs: number;
  measureMs: number;
  /** Processes whose CPU is sampled over the window (name → pid). */
  pids: Record<string, number>;
  /** Process whose RSS peak is tracked. */
  rssPid?: number;
}

export interface StreamResult {
  /** Time from sending a message to its first content chunk (ms). */
  ttfc: Summary;
  /** Delay between consecutive chunks of one reply (ms). */
  gap: Summary;
  /** The model's pieces received (a chunk frame may carry several). */
  chunks: number;
  chunksPerSec: number;
  /** Chunk frames (or events) received. */
  frames: number;
  turns: number;
  errors: number;
  wallMs: number;
  /** CPU ms per process over the window (`other`: the rest of the machine), and as a share of one core. */
  cpuMs: Record<string, number>;
  /** CPU ms of each process's main thread. */
  mainMs: Record<string, number>;
  /** Kernel CPU ms of each process (all threads): its system calls. */
  sysMs: Record<string, number>;
  cores: Record<string, number>;
  rssPeakMb?: number;
}

type Window = Pick<StreamResult, 'wallMs' | 'cpuMs' | 'mainMs' | 'sysMs' | 'cores' | 'rssPeakMb'>;

interface Client {
  sentAt: number;
  last: number;
  first: boolean;
  measured: boolean;
  done: (() => void) | undefined;
}

/** The shared timeline and tallies of one run. */
function tally(load: StreamLoad) {
  const ttfc = new Samples();
  const gap = new Samples();
  const t0 = performance.now();
  const measureStart = t0 + load.rampMs;
  const measureEnd = measureStart + load.measureMs;
  let chunks = 0;
  let frames = 0;
  let turns = 0;
  let errors = 0;
  return {
    measureStart,
    measureEnd,
    newClient: (): Client => ({ sentAt: 0, last: 0, first: false, measured: false, done: undefined }),
    started(c: Client) {
      c.sentAt = performance.now();
      c.first = false;
      c.measured = c.sentAt >= measureStart && c.sentAt < measureEnd;
    },
    chunk(c: Client, pieces = 1) {
      const now = performance.now();
      if (!c.first) {
        c.first = true;
        if (c.measured) ttfc.push(now - c.sentAt);
      } else if (c.measured) gap.push(now - c.last);
      c.last = now;
      if (now >= measureStart && now < measureEnd) {
        chunks += pieces;
        frames++;
      }
    },
    ended(c: Client, ok: boolean) {
      if (c.measured) turns++;
      if (!ok) errors++;
      const done = c.done;
      c.done = undefined;
      done?.();
    },
    /** Runs `turn` in a loop for one client until the window closes. */
    async loop(i: number, c: Client, send: () => void) {
      await sleep((i * load.spreadMs) / load.n);
      while (performance.now() < measureEnd) {
        const finished = new Promise<void>((res) => (c.done = res));
        this.started(c);
        send();
        const timeout = sleep(60_000).then(() => {
          if (c.done) this.ended(c, false);
        });
        await Promise.race([finished, timeout]);
      }
    },
    /** Samples CPU and RSS over the window while `run` goes on. */
    async measure(run: Promise<unknown>): Promise<Window> {
      await sleep(measureStart - performance.now());
      const cpu = cpuWindow(load.pids);
      const peak = load.rssPid ? rssPeak(load.rssPid) : undefined;
      await sleep(measureEnd - performance.now());
      const { wallMs, cpuMs, mainMs, sysMs } = cpu();
      const rssPeakKb = peak?.();
      await run;
      const cores = Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, round(v / wallMs, 2)]));
      return {
        wallMs: round(wallMs, 0),
        cpuMs,
        mainMs,
        sysMs,
        cores,
        ...(rssPeakKb !== undefined && { rssPeakMb: round(rssPeakKb / 1024, 1) }),
      };
    },
    result(window: Window): StreamResult {
      return {
        ttfc: ttfc.summary(),
        gap: gap.summary(),
        chunks,
        chunksPerSec: Math.round((chunks / window.wallMs) * 1000),
        frames,
        turns,
        errors,
        ...window,
      };
    },
  };
}

export async function agentdStreams(wsUrl: string, load: StreamLoad): Promise<StreamResult> {
  const clients: Client[] = [];
  const t = { run: undefined as ReturnType<typeof tally> | undefined };
  const sockets: WebSocket[] = await openSockets(wsUrl, load.n, {
    onMessage: (i, data) => {
      const c = clients[i];
      const run = t.run;
      if (!c || !run) return;
      const ev = eventOf(data);
      if (ev === 'chunk') run.chunk(c, fillerPieces(data));
      else if (ev === 'response') run.ended(c, true);
      else if (ev === 'error') run.ended(c, false);
    },
  });
  const run = tally(load);
  t.run = run;
  for (let i = 0; i < load.n; i++) clients.push(run.newClient());
  const frames = sockets.map((_, i) =>
    JSON.stringify({ type: 'message', content: load.message, sessionId: `bench-${i}` }),
  );
  const loops = Promise.all(clients.map((c, i) => run.loop(i, c, () => sockets[i]!.send(frames[i]!))));
  const window = await run.measure(loops);
  await closeSockets(sockets);
  return run.result(window);
}

/** An SSE endpoint that answers one POST with one streamed turn. */
export interface SseTarget {
  url: string;
  /** The request body (JSON): the same for every turn, or client `client`'s `turn`-th (from 0). */
  body: string | ((client: number, turn: number) => string);
  headers?: Record<string, string>;
  /** What each event means to the tally (see lib/sse.ts). */
  classify: (event: string) => SseKind;
  /** The model's pieces a chunk event carries (default 1). */
  pieces?: (event: string) => number;
}

/** `load` as SSE clients of `target` (node:http keep-alive, one socket per client). */
export async function sseStreams(target: SseTarget, load: StreamLoad): Promise<StreamResult> {
  const url = new URL(target.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: load.n });
  const run = tally(load);
  const bodyOf = typeof target.body === 'string' ? () => target.body as string : target.body;
  const turns = new Array<number>(load.n).fill(0);
  const send = (c: Client, i: number) => {
    let failed = false;
    const body = bodyOf(i, turns[i]!++);
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...target.headers,
    };
    const req = http.request(
      { agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers },
      (res) => {
        res.setEncoding('utf8');
        res.on(
          'data',
          sseSplitter((event) => {
            const kind = target.classify(event);
            if (kind === 'chunk') run.chunk(c, target.pieces?.(event) ?? 1);
            else if (kind === 'error') failed = true;
          }),
        );
        res.on('end', () => run.ended(c, res.statusCode === 200 && !failed));
        res.on('error', () => run.ended(c, false));
      },
    );
    req.on('error', () => run.ended(c, false));
    req.end(body);
  };
  const clients = Array.from({ length: load.n }, () => run.newClient());
  const loops = Promise.all(clients.map((c, i) => run.loop(i, c, () => send(c, i))));
  const window = await run.measure(loops);
  agent.destroy();
  return run.result(window);
}

/** The same load straight to the simulator's chat completions (the baseline of every "added" figure). */
export function directStreams(simUrl: string, load: StreamLoad): Promise<StreamResult> {
  const body = JSON.stringify({
    model: 'sim-model',
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'You are a benchmark agent.' },
      { role: 'user', content: load.message },
    ],
  });
  return sseStreams(
    { url: `${simUrl}/chat/completions`, body, headers: { authorization: 'Bearer bench-key' }, classify: openAiEvent },
    load,
  );
}
