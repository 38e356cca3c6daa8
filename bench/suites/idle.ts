/**
 * Idle connections: 10 000 WebSocket connections that only stay open. Memory per connection is
 * the service's growth (RSS, and JS heap after a full GC through the bench probe) divided by the
 * count. Source addresses are spread over 127.0.0.1-100 (the config also raises connectionsPerIp).
 */
import { readFileSync } from 'node:fs';
import { cores, type Bench } from '../lib/bench.ts';
import { cpuWindow, startService } from '../lib/procs.ts';
import { round, sleep } from '../lib/stats.ts';
import { closeSockets, openSockets } from '../lib/ws-load.ts';

const CONNECTIONS = 10_000;

/** Soft limit of open files of this process (node raises it to the hard limit at start). */
function openFileLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === 'unlimited' ? Infinity : Number(soft ?? 1024);
}

export const idleBench: Bench = {
  name: 'idle',
  title: 'Idle WebSocket connections',
  quick: true,
  async run({ log }) {
    const need = CONNECTIONS + 512;
    if (openFileLimit() < need) {
      throw new Error(
        `the idle benchmark needs ${need} open files in the bench and the service, but the limit is ${openFileLimit()}; raise it (ulimit -n ${need * 2}) and run again`,
      );
    }
    const svc = await startService({ modelUrl: 'http://127.0.0.1:9/v1' });
    try {
      // Warm up the upgrade path, then measure from a settled baseline.
      await closeSockets(await openSockets(svc.wsUrl, 100));
      await sleep(300);
      const before = await svc.stats();
      const rss0 = svc.sample().rssKb;
      log(`  opening ${CONNECTIONS} connections`);
      const cpu = cpuWindow({ agentd: svc.pid });
      const t0 = performance.now();
      const sockets = await openSockets(svc.wsUrl, CONNECTIONS, { concurrency: 250, sourceAddresses: 100 });
      const openMs = performance.now() - t0;
      const openCpu = cpu();
      await sleep(1000);
      const after = await svc.stats();
      const rss1 = svc.sample().rssKb;
      const idleCpu = cpuWindow({ agentd: svc.pid });
      await sleep(2000);
      const idle = idleCpu();
      log('  closing');
      await closeSockets(sockets, 20_000);
      await sleep(500);
      const closed = await svc.stats();
      const rss2 = svc.sample().rssKb;
      const rssPer = ((rss1 - rss0) * 1024) / CONNECTIONS;
      const heapPer = (after.memory.heapUsed - before.memory.heapUsed) / CONNECTIONS;
      const externalPer = (after.memory.external - before.memory.external) / CONNECTIONS;
      return {
        name: 'idle',
        title: 'Idle WebSocket connections',
        load: `${CONNECTIONS.toLocaleString('en-US')} WebSocket connections opened (250 at a time) and left idle; memory read after 1 s, heap after a full GC.`,
        rows: [
          ['RSS per connection', `${round(rssPer / 1024, 2)} KB`],
          [
            '— of which JS heap (after GC) / external',
            `${round(heapPer / 1024, 2)} KB / ${round(externalPer / 1024, 2)} KB`,
          ],
          [
            'RSS before / with connections / after closing',
            `${round(rss0 / 1024, 1)} / ${round(rss1 / 1024, 1)} / ${round(rss2 / 1024, 1)} MB`,
          ],
          [
            'heap after GC before / with / after closing',
            `${round(before.memory.heapUsed / 2 ** 20, 1)} / ${round(after.memory.heapUsed / 2 ** 20, 1)} / ${round(closed.memory.heapUsed / 2 ** 20, 1)} MB`,
          ],
          [
            'time to open all',
            `${round(openMs / 1000, 2)} s (${Math.round((CONNECTIONS / openMs) * 1000)}/s, agentd ${round(((openCpu.cpuMs.agentd ?? 0) / CONNECTIONS) * 1000, 1)} µs CPU each)`,
          ],
          ['agentd CPU while idle', cores((idle.cpuMs.agentd ?? 0) / idle.wallMs)],
        ],
        metrics: {
          connections: CONNECTIONS,
          rssKb: { before: rss0, with: rss1, closed: rss2 },
          rssPerConnBytes: Math.round(rssPer),
          heapPerConnBytes: Math.round(heapPer),
          externalPerConnBytes: Math.round(externalPer),
          before,
          after,
          closed,
          openMs: round(openMs, 0),
          openCpuMs: openCpu.cpuMs,
          idleCpuMs: idle.cpuMs,
        },
        goals: [
          {
            id: 'idle-rss-per-conn',
            label: 'RSS per idle WebSocket connection',
            target: 4,
            unit: 'KB',
            better: 'lower',
            value: round(rssPer / 1024, 2),
            note:
              svc.engine === 'uws'
                ? 'uWS keeps per-socket native state (socket, WebSocket data, two topic subscriptions) plus the JS Connection object and Set entry.'
                : `on node:http each connection is JavaScript: a net.Socket (its stream states, handle and idle timer) and ws's WebSocket with its Receiver (a Writable stream) and Sender, ${round(heapPer / 1024, 2)} KB of heap after GC; a bare idle net.Socket alone holds ~5 KB (stop 48), so 4 KB needs the native engine (uWebSockets.js: 1.07 KB per connection in stop 48's run).`,
          },
        ],
        notes: [
          "Kernel socket buffers are not in RSS. The JS part is the Connection user data ({id, ip, closed}) and the gateway's Set of open sockets.",
        ],
      };
    } finally {
      await svc.stop();
    }
  },
};
