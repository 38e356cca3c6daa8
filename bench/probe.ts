/**
 * Benchmark probe, preloaded with `node --import ./bench/probe.ts` into an agentd started with an
 * IPC channel (bench/lib/procs.ts). agentd publishes its app on the diagnostics channel
 * `agentd:app` (src/cli.ts; free when nobody subscribes). The probe answers `{ id, op }` messages
 * so the load generator can look inside the service without an HTTP route: `stats` (after a full GC
 * when the process runs with --expose-gc) returns memory, bus listener counts and open handles;
 * `clock` returns process.hrtime in µs (the clock of --cpu-prof sample timestamps).
 */
import { subscribe } from 'node:diagnostics_channel';
import type { App } from '../src/app.ts';
import type { AppEvents } from '../src/app.ts';
import { EVENT_FRAMES } from '../src/http/frames.ts';
import { APP_CHANNEL } from '../src/cli-args.ts';

/** What the probe answers (bench/lib/procs.ts asks). */
export type ProbeReply = { id: number } & (
  | { us: number }
  | { gc: boolean; memory: NodeJS.MemoryUsage; listeners: Record<string, number>; handles: Record<string, number> }
);

function attach(app: App): void {
  if (!process.send) return;
  process.channel?.unref();
  const counts = (names: string[]) => Object.fromEntries(names.map((n) => [n, app.bus.listenerCount(n as keyof AppEvents)]));
  process.on('message', (msg: { id: number; op: string }) => {
    const reply = (body: ProbeReply) => process.send?.(body);
    if (msg.op === 'clock') return reply({ id: msg.id, us: Number(process.hrtime.bigint() / 1000n) });
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const handles: Record<string, number> = {};
    for (const type of process.getActiveResourcesInfo()) handles[type] = (handles[type] ?? 0) + 1;
    reply({ id: msg.id, gc: gc !== undefined, memory: process.memoryUsage(), listeners: counts(Object.keys(EVENT_FRAMES)), handles });
  });
}

subscribe(APP_CHANNEL, (app) => attach(app as App));
