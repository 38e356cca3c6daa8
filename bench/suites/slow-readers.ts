/**
 * Slow readers: 20 WebSocket readers of one session stop reading (bare sockets that did the upgrade by hand and
 * then read nothing) while the session streams a long reply: 4 000 words of 8 KiB (31 MiB) at 500 words a second,
 * followed by one reader that reads. The same reply runs first on a fresh agentd without the stalled readers: the
 * reply itself costs memory (its text, its stored event, the response frame), and the difference of the two peaks
 * is what the stalled readers cost. Also measured: how long after the reply began agentd had closed its side of the
 * 20 TCP connections (Linux: /proc/net/tcp). Every WebSocket bound at its default (`server.limits.slowReaderBytes`,
 * `slowReaderMs`), so the same agent file measures an older agentd too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { connectRawWs, serverSideState, type RawWs } from '../../test/support/raw-ws.ts';
import type { Bench } from '../lib/bench.ts';
import { rssPeak, startService } from '../lib/procs.ts';
import { round } from '../lib/stats.ts';
import { closeSockets, openSockets } from '../lib/ws-load.ts';

const READERS = 20;
const WORD = 8 * 1024;
const WORDS = 4000;
const RATE = 500;
const SESSION = 'slow';
const MIB = (WORDS * WORD) / 2 ** 20;

interface Run {
  rss0: number;
  peak: number;
  replyEnd: number;
  replyMs: number;
  /** Per stalled reader: ms from the reply's start until agentd's side of its TCP connection closed. */
  closedAfter: Array<number | undefined>;
  got1008: number;
}

/** One fresh agentd, `stalled` readers that stop reading, the long reply; what it cost. */
async function measure(sim: Simulator, stalled: number): Promise<Run> {
  const svc = await startService({ agent: 'bench-slow-readers.yml', modelUrl: sim.url });
  const readers: RawWs[] = [];
  try {
    for (let i = 0; i < stalled; i++) {
      const reader = await connectRawWs(svc.port);
      reader.send({ type: 'subscribe', sessionId: SESSION });
      reader.send({ type: 'ping' });
      await reader.next('pong');
      reader.pause();
      readers.push(reader);
    }
    let ended: () => void = () => undefined;
    const replyEnded = new Promise<void>((resolve) => (ended = resolve));
    const [watcher] = await openSockets(svc.wsUrl, 1, {
      onMessage: (_i, data) => data.subarray(0, 40).toString().startsWith('{"event":"response"') && ended(),
    });
    watcher!.send(JSON.stringify({ type: 'subscribe', sessionId: SESSION }));
    await sleep(500);
    const rss0 = svc.sample().rssKb;
    const peak = rssPeak(svc.pid, 100);
    const t0 = performance.now();
    const closedAfter: Array<number | undefined> = Array(stalled).fill(undefined);
    const watchClose = setInterval(() => {
      readers.forEach((r, i) => {
        if (closedAfter[i] === undefined && serverSideState(svc.port, r.localPort) === 'closed')
          closedAfter[i] = performance.now() - t0;
      });
    }, 100);
    await fetch(`${svc.url}/api/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: SESSION, message: 'long reply' }),
    });
    await replyEnded;
    const replyMs = performance.now() - t0;
    const replyEnd = svc.sample().rssKb;
    // Up to 45 s: past the 30 s an older agentd waited for a close handshake, so its figure shows too.
    const deadline = performance.now() + 45_000;
    while (closedAfter.some((c) => c === undefined) && performance.now() < deadline) await sleep(100);
    clearInterval(watchClose);
    const peakKb = peak();
    for (const r of readers) r.resume();
    await Promise.race([Promise.all(readers.map((r) => r.ended)), sleep(10_000)]);
    const got1008 = readers.filter((r) => r.closeFrame()?.code === 1008).length;
    await closeSockets([watcher!]);
    return { rss0, peak: peakKb, replyEnd, replyMs, closedAfter, got1008 };
  } finally {
    for (const r of readers) r.socket.destroy();
    await svc.stop();
  }
}

const mb = (kb: number) => round(kb / 1024, 1);
const s = (ms: number | undefined) => (ms === undefined ? 'not closed within 45 s' : `${round(ms / 1000, 1)} s`);

export const slowReadersBench: Bench = {
  name: 'slow-readers',
  title: 'Slow readers: 20 stalled WebSocket readers during a long reply',
  quick: false,
  async run({ log }) {
    const sim = await startSimulator({
      record: false,
      script: (body) =>
        JSON.stringify(body.messages.at(-1)).includes('long reply')
          ? { text: Array.from({ length: WORDS }, (_, i) => `${i}`.padEnd(WORD, 'x')).join(' '), tokensPerSec: RATE }
          : undefined,
    });
    try {
      log(`  the reply alone: ${MIB} MiB at ${RATE} words/s`);
      const alone = await measure(sim, 0);
      log(`  with ${READERS} stalled readers`);
      const slow = await measure(sim, READERS);
      const cost = slow.peak - slow.rss0 - (alone.peak - alone.rss0);
      const closed = slow.closedAfter.filter((c): c is number => c !== undefined).sort((a, b) => a - b);
      return {
        name: 'slow-readers',
        title: this.title,
        load: `${READERS} readers subscribed to one session stop reading (bare sockets); one reply of ${WORDS} words of 8 KiB (${MIB} MiB) at ${RATE} words/s that one reader reads; the same reply first without the stalled readers, each on a fresh agentd. Default limits.`,
        rows: [
          [
            'agentd RSS before / peak / at the reply end, the reply alone',
            `${mb(alone.rss0)} / ${mb(alone.peak)} / ${mb(alone.replyEnd)} MB`,
          ],
          [
            `agentd RSS before / peak / at the reply end, with ${READERS} stalled readers`,
            `${mb(slow.rss0)} / ${mb(slow.peak)} / ${mb(slow.replyEnd)} MB`,
          ],
          [`what the ${READERS} stalled readers cost at the peak`, `${mb(cost)} MB`],
          [
            "agentd closed its side of the readers' TCP connections (first / last, from the reply's start)",
            `${s(closed[0])} / ${s(closed.length === READERS ? closed.at(-1) : undefined)}`,
          ],
          ['reply length (with the stalled readers)', `${round(slow.replyMs / 1000, 1)} s`],
          [
            'readers that got the 1008 close frame when they read again, after the reply',
            `${slow.got1008} of ${READERS}`,
          ],
        ],
        metrics: {
          readers: READERS,
          alone: { ...alone, closedAfter: undefined },
          stalled: { ...slow, closedAfter: slow.closedAfter.map((c) => (c === undefined ? null : round(c, 0))) },
          costKb: cost,
        },
        goals: [
          {
            id: 'slow-readers-rss-cost',
            label: `RSS the ${READERS} stalled readers cost during a long reply`,
            target: 20,
            unit: 'MB',
            better: 'lower',
            value: mb(cost),
          },
        ],
        notes: [
          "Readers of one session share its frames' buffers: what they cost is the longest backlog agentd holds for one of them (at most `slowReaderBytes` plus one frame), not 20 backlogs.",
          'A reader that reads again within 2 s of its close gets the 1008 close frame (test/int/ws-slow-reader.test.ts); these read again only after the reply, by when agentd had cut them.',
        ],
      };
    } finally {
      await sim.close();
    }
  },
};
