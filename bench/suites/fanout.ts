/**
 * Fan-out: one session, one driver sending messages and 1000 viewers subscribed to the session.
 * Every chunk frame is serialized once and published to all of them. Lag of a delivery is how
 * late it arrives against the simulator's schedule: the turn's first chunk (earliest arrival at
 * any client) plus k × the piece interval for the k-th chunk.
 */
import { cores, ms, perSec, type Bench } from '../lib/bench.ts';
import { cpuWindow, rssPeak, startService } from '../lib/procs.ts';
import { round, Samples, sleep } from '../lib/stats.ts';
import { closeSockets, eventOf, openSockets } from '../lib/ws-load.ts';

const VIEWERS = 1000;
const RATE = 20;
const LEN = 40;

export const fanoutBench: Bench = {
  name: 'fanout',
  title: 'Fan-out: one session, 1000 WebSocket viewers',
  quick: true,
  async run({ mode, sim, log }) {
    const svc = await startService({ modelUrl: sim.url });
    try {
      const period = 1000 / RATE;
      const lag = new Samples();
      const spread = new Samples();
      const counts = new Int32Array(VIEWERS + 1);
      /** Turn number each client is in (counted by `thinking` frames) and each turn's first arrival. */
      const turnOf = new Int32Array(VIEWERS + 1);
      const anchors: number[] = [];
      let measuring = false;
      let deliveries = 0;
      let responses = 0;
      let onResponse: (() => void) | undefined;
      const onMessage = (i: number, data: Buffer) => {
        const ev = eventOf(data);
        if (ev === 'chunk') {
          const now = performance.now();
          const k = counts[i]!++;
          const t = turnOf[i]!;
          const anchor = (anchors[t] ??= now);
          if (!measuring) return;
          deliveries++;
          lag.push(Math.max(0, now - (anchor + k * period)));
          if (k === 0) spread.push(now - anchor);
        } else if (ev === 'thinking') {
          counts[i] = 0;
          turnOf[i]!++;
        } else if (ev === 'response' && i === VIEWERS) {
          responses++;
          onResponse?.();
        }
      };
      log(`  opening ${VIEWERS} viewers`);
      const viewers = await openSockets(svc.wsUrl, VIEWERS, { onMessage });
      viewers.forEach((ws) => ws.send(JSON.stringify({ type: 'subscribe', sessionId: 'fan' })));
      const [driver] = await openSockets(svc.wsUrl, 1, { onMessage: (_, d) => onMessage(VIEWERS, d) });
      await sleep(500);
      const turn = () =>
        new Promise<void>((res) => {
          onResponse = res;
          driver!.send(
            JSON.stringify({ type: 'message', content: `[[len:${LEN}]] [[rate:${RATE}]] fan out`, sessionId: 'fan' }),
          );
        });
      await turn(); // warm-up
      const turns = mode === 'full' ? 5 : 2;
      measuring = true;
      const cpu = cpuWindow({ agentd: svc.pid, simulator: sim.pid });
      const peak = rssPeak(svc.pid);
      for (let t = 0; t < turns; t++) await turn();
      const { wallMs, cpuMs } = cpu();
      const rssPeakKb = peak();
      measuring = false;
      await closeSockets([...viewers, driver!]);
      const rate = (deliveries / wallMs) * 1000;
      const lagS = lag.summary();
      const spreadS = spread.summary();
      const c = (k: string) => (cpuMs[k] ?? 0) / wallMs;
      return {
        name: 'fanout',
        title: 'Fan-out: one session, 1000 WebSocket viewers',
        load: `1 driver + ${VIEWERS} viewers subscribed to one session; ${turns} replies of ${LEN} pieces at ${RATE} pieces/s (${perSec((VIEWERS + 1) * RATE)} deliveries offered).`,
        rows: [
          ['deliveries/s (chunk frames received by all clients)', perSec(rate)],
          ["lag p50 / p99 / max (vs the simulator's schedule)", `${ms(lagS.p50)} / ${ms(lagS.p99)} / ${ms(lagS.max)}`],
          ['first-chunk spread across the 1001 clients p50 / p99', `${ms(spreadS.p50)} / ${ms(spreadS.p99)}`],
          [
            'CPU: agentd / simulator / load generator / other jobs',
            `${cores(c('agentd'))} / ${cores(c('simulator'))} / ${cores(c('loadgen'))} / ${cores(c('other'))}`,
          ],
          ['agentd CPU per delivery', `${round(((cpuMs.agentd ?? 0) * 1000) / Math.max(1, deliveries), 2)} µs`],
          ['agentd RSS peak', `${round(rssPeakKb / 1024, 1)} MB`],
          ['replies completed', responses - 1],
        ],
        metrics: {
          deliveries,
          deliveriesPerSec: Math.round(rate),
          lagMs: lagS,
          spreadMs: spreadS,
          cpuMs,
          wallMs: round(wallMs, 0),
          rssPeakMb: round(rssPeakKb / 1024, 1),
        },
        goals: [],
        notes: [
          'Each frame is serialized once and handed to uWS publish; the 1001 receiving `ws` clients run in the load generator, so the spread across clients is mostly the load generator working through 1001 sockets.',
        ],
      };
    } finally {
      await svc.stop();
    }
  },
};
