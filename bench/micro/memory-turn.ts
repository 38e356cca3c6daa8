/**
 * What memory costs per turn (issue 62): short turns over REST (`/api/message-sync`, one session per turn, JSONL
 * store) against services that differ only in `memory`, in this process with the simulator, the rounds interleaved so
 * that the machine's drift falls on every variant alike. Per variant: wall time per turn (median, p95) and this
 * process's CPU per turn (agentd and the simulator together: the difference between variants is memory's).
 *
 * - `off`: no `memory:` (a turn as it costs without memory).
 * - `on`: memory on, the caller's profile empty (the tools offered, the profile read at each new turn).
 * - `on+profile`: memory on, a 1 000-character profile and 200 items in the caller's log.
 * - `search`: memory on as `on+profile`, each turn calls `memory_search` once (two model requests per turn).
 *
 *   node --expose-gc --import tsx bench/micro/memory-turn.ts [turns per round, default 100] [rounds, default 5] [off]
 *
 * `off` alone measures only the first variant: run it in a tree without memory to compare a turn before and after.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../../test/support/start-app.ts';

const TURNS = Number(process.argv[2] ?? 100);
const ROUNDS = Number(process.argv[3] ?? 5);
const sim = await startSimulator({ record: false });
const dir = await mkdtemp(join(tmpdir(), 'memory-turn-'));
const limits = { limits: { rest: { points: 1_000_000 } } };

const start = (name: string, memory: boolean) =>
  startApp(
    { storage: { type: 'jsonl', dir: join(dir, name) }, server: limits, ...(memory && { memory: {} }) },
    { modelUrl: sim.url },
  );

async function say(app: RunningApp, sessionId: string, message: string): Promise<void> {
  const res = await fetch(`${app.url}/api/message-sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message, sessionId }),
  });
  if (res.status !== 200) throw new Error(`turn failed: ${res.status} ${await res.text()}`);
  await res.text();
}

const tool = (name: string, args: unknown) => `[[tool:${name} ${JSON.stringify(args)}]]`;
const offOnly = process.argv[4] === 'off';
const variants: { name: string; app: RunningApp; message: (i: number) => string }[] = [
  { name: 'off', app: await start('off', false), message: (i) => `hello number ${i}, a short question` },
];
if (!offOnly) {
  variants.push({ name: 'on', app: await start('on', true), message: (i) => `hello number ${i}, a short question` });
  const full = await start('full', true);
  await say(full, 'setup', tool('memory_profile', { text: 'The user likes short answers. '.repeat(33) }));
  for (let i = 0; i < 200; i++)
    await say(full, 'setup', tool('memory_save', { text: `fact ${i}: the user once mentioned item number ${i}` }));
  variants.push(
    { name: 'on+profile', app: full, message: (i) => `hello number ${i}, a short question` },
    { name: 'search', app: full, message: (i) => `q ${i} ${tool('memory_search', { query: `item number ${i}` })}` },
  );
}

const samples = new Map<string, { ms: number[]; cpuUs: number }>(variants.map((v) => [v.name, { ms: [], cpuUs: 0 }]));
const gc = (globalThis as { gc?: () => void }).gc;
for (const v of variants) for (let i = 0; i < 20; i++) await say(v.app, `warm${i}`, v.message(i)); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const v of variants) {
    gc?.();
    const s = samples.get(v.name)!;
    const cpu = process.cpuUsage();
    for (let i = 0; i < TURNS; i++) {
      const t0 = performance.now();
      await say(v.app, `r${round}-${i}`, v.message(i));
      s.ms.push(performance.now() - t0);
    }
    const used = process.cpuUsage(cpu);
    s.cpuUs += used.user + used.system;
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const rows = variants.map(({ name }) => {
  const { ms, cpuUs } = samples.get(name)!;
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    variant: name,
    turns: ms.length,
    medianMs: +quantile(sorted, 0.5).toFixed(3),
    p95Ms: +quantile(sorted, 0.95).toFixed(3),
    cpuMsPerTurn: +(cpuUs / 1000 / ms.length).toFixed(3),
  };
});
console.table(rows);
console.log(JSON.stringify(rows));
for (const app of new Set(variants.map((v) => v.app))) await app.stop();
await sim.close();
await rm(dir, { recursive: true, force: true });
