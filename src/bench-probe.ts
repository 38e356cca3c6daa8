/**
 * Benchmark probe, enabled only by AGENTD_BENCH_PROBE=1 on a process started with an IPC channel
 * (bench/lib/procs.ts). It answers `{ id, op }` messages so the load generator can look inside the
 * service without an HTTP route: `stats` (after a full GC when the process runs with --expose-gc)
 * returns memory, bus listener counts and open handles; `clock` returns process.hrtime in µs
 * (the clock of --cpu-prof sample timestamps). Nothing here runs in normal operation.
 */
import type { App } from './app.ts';
import type { AppEvents } from './bus/app-bus.ts';
import { EVENT_FRAMES } from './http/frames.ts';

export function attachBenchProbe(app: App): void {
  if (!process.send) return;
  process.channel?.unref();
  const counts = (names: string[]) => Object.fromEntries(names.map((n) => [n, app.bus.listenerCount(n as keyof AppEvents)]));
  process.on('message', (msg: { id: number; op: string }) => {
    const reply = (body: object) => process.send?.({ id: msg.id, ...body });
    if (msg.op === 'clock') return reply({ us: Number(process.hrtime.bigint() / 1000n) });
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const handles: Record<string, number> = {};
    for (const type of process.getActiveResourcesInfo()) handles[type] = (handles[type] ?? 0) + 1;
    reply({ gc: gc !== undefined, memory: process.memoryUsage(), listeners: counts(Object.keys(EVENT_FRAMES)), handles });
  });
}
