/**
 * What one session costs (SECURITY.md, "Caps per principal"): 1 000 sessions of one short turn each
 * on the JSONL store, in this process (the simulator too, its records cleared before measuring).
 * Heap per session after GC, held in memory (dormant) or evicted (`evicted`: maxSessionsInMemory 1,
 * only the store's cache holds it), and bytes on disk per session file.
 *
 *   node --expose-gc --import tsx bench/micro/session-cost.ts [evicted]
 */
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startSimulator } from '../../tools/simulator/index.ts';
import { startApp } from '../../test/support/start-app.ts';
const sim = await startSimulator();
const dir = await mkdtemp(join(tmpdir(), 'cost-'));
const held = process.argv[2] === 'evicted' ? 1 : 1000;
const app = await startApp(
  { storage: { type: 'jsonl', dir, maxSessionsInMemory: held }, server: { limits: { rest: { points: 100000 } } } },
  { modelUrl: sim.url },
);
const N = 1000;
const gc = (globalThis as any).gc as () => void;
gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < N; i++) {
  const r = await fetch(`${app.url}/api/message-sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: `hello number ${i}, a short question`, sessionId: `s${i}` }),
  });
  await r.text();
}
sim.requests.length = 0; // the simulator runs in this process: its records are not agentd's
gc();
await new Promise((r) => setTimeout(r, 200));
gc();
const after = process.memoryUsage().heapUsed;
const files = await readdir(dir);
let bytes = 0;
for (const f of files) bytes += (await stat(join(dir, f))).size;
const du = execFileSync('du', ['-sk', dir]).toString();
console.log(
  JSON.stringify({
    sessions: N,
    heapPerSessionKb: +((after - before) / N / 1024).toFixed(2),
    filePerSessionBytes: Math.round(bytes / files.length),
    duKbPerSession: +(parseInt(du) / N).toFixed(2),
    held: held === 1 ? 'evicted (only the store cache)' : 'in memory (dormant)',
  }),
);
await app.stop();
await sim.close();
