/**
 * How fast this machine is right now, by two fixed workloads run in the bench process before each
 * benchmark: this VM's speed moves by up to ×3 between days with nothing else running (the same
 * commit measured 2 006 and 662 instant turns/s), so every result file records them and runs of
 * different days can be told apart from changes of the code.
 */
import { once } from 'node:events';
import { createServer, connect, type AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { machineBusyMs } from './procs.ts';
import { round, Samples, sleep } from './stats.ts';

export interface MachineSpeed {
  /** A fixed JS workload (JSON round trips of a chat request), best of 3, in ms. */
  jsMs: number;
  /** One loopback TCP round trip between two sockets of this process (median of 2 000), in µs. */
  loopbackUs: number;
}

function jsWorkloadMs(): number {
  const request = {
    model: 'm',
    messages: Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i} of a session`,
    })),
    stream: true,
  };
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    let size = 0;
    for (let i = 0; i < 2_000; i++)
      size += (JSON.parse(JSON.stringify(request)) as { messages: unknown[] }).messages.length;
    if (size === 0) throw new Error('unreachable');
    best = Math.min(best, performance.now() - t0);
  }
  return Math.round(best * 10) / 10;
}

async function loopbackRoundTripUs(): Promise<number> {
  const server = createServer((s) => s.on('data', (d) => s.write(d)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.setNoDelay(true);
  await once(socket, 'connect');
  const times = new Samples();
  for (let i = 0; i < 2_000; i++) {
    const t0 = performance.now();
    socket.write('x');
    await once(socket, 'data');
    times.push(performance.now() - t0);
  }
  socket.destroy();
  server.close();
  return Math.round(times.summary().p50 * 1000);
}

export async function machineSpeed(): Promise<MachineSpeed> {
  return { jsMs: jsWorkloadMs(), loopbackUs: await loopbackRoundTripUs() };
}

/** How busy the machine is: the kernel's load averages (1, 5, 15 min) and the cores in use over a short sample. */
export interface MachineLoad {
  loadavg: number[];
  /** CPU of every process on the machine over `sampleMs`, in cores. */
  busyCores: number;
}

export async function machineLoad(sampleMs = 1000): Promise<MachineLoad> {
  const busy0 = machineBusyMs();
  const t0 = performance.now();
  await sleep(sampleMs);
  const busyCores = (machineBusyMs() - busy0) / (performance.now() - t0);
  return { loadavg: loadavg().map((v) => round(v, 2)), busyCores: round(busyCores, 2) };
}
