/**
 * Commit throughput of the JSONL record store (src/store/records/jsonl-engine.ts) with group commit (every commit
 * that waits goes into the next append and sync) against without it (`maxGroup: 1`: one append and one fdatasync per
 * commit, as the per-feature JSONL stores write), at concurrency 1 and 16. Each commit puts one small record (a
 * webhook delivery's size) with one index entry. Per variant: commits per second (median of the rounds, and their
 * range) and fdatasyncs per commit (counted, not timed: the figure that does not depend on the machine's load).
 *
 *   npx tsx bench/micro/record-commit.ts [commits per round, default 400] [rounds, default 5]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createJsonlRecordStore } from '../../src/store/records/index.ts';
import { nodeFiles, type RecordFiles } from '../../src/store/records/jsonl-files.ts';

const COMMITS = Number(process.argv[2] ?? 400);
const ROUNDS = Number(process.argv[3] ?? 5);
const log = pino({ level: 'silent' });
const dir = await mkdtemp(join(tmpdir(), 'record-commit-'));
const body = JSON.stringify({ type: 'turn.completed', sessionId: 's'.repeat(36), usage: { input: 120, output: 80 } });

/** One round: `COMMITS` commits by `concurrency` writers; commits per second and syncs per commit. */
async function round(name: string, concurrency: number, maxGroup: number) {
  let syncs = 0;
  const files: RecordFiles = {
    async open(path, how) {
      const file = await nodeFiles.open(path, how);
      return { ...file, sync: () => (syncs++, file.sync()) };
    },
  };
  const store = createJsonlRecordStore({ dir: join(dir, `${name}-${Math.random()}`), log, files, maxGroup });
  await store.open();
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < COMMITS; i = next++)
      await store.commit([
        {
          op: 'put',
          ns: 'deliveries',
          id: `msg_${i}`,
          value: { id: `msg_${i}`, status: 'pending', nextAttemptAt: i, body },
          index: [{ index: 'due', group: 'pending', score: i }],
        },
      ]);
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, writer));
  const seconds = (performance.now() - t0) / 1000;
  await store.close();
  return { perSecond: COMMITS / seconds, syncsPerCommit: syncs / COMMITS };
}

const variants = [
  { name: 'one sync per commit, concurrency 1', concurrency: 1, maxGroup: 1 },
  { name: 'group commit, concurrency 1', concurrency: 1, maxGroup: Infinity },
  { name: 'one sync per commit, concurrency 16', concurrency: 16, maxGroup: 1 },
  { name: 'group commit, concurrency 16', concurrency: 16, maxGroup: Infinity },
];
const results = new Map(variants.map((v) => [v.name, [] as { perSecond: number; syncsPerCommit: number }[]]));
try {
  for (let r = 0; r < ROUNDS; r++)
    for (const v of variants)
      results.get(v.name)?.push(await round(v.name.replace(/\W+/g, '-'), v.concurrency, v.maxGroup));
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(`${COMMITS} commits per round, ${ROUNDS} rounds interleaved\n`);
console.log('| variant | commits/s (median) | range | fdatasyncs per commit |');
console.log('|---|---|---|---|');
for (const v of variants) {
  const rounds = results.get(v.name) ?? [];
  const rates = rounds.map((x) => x.perSecond).sort((a, b) => a - b);
  const syncs = rounds.reduce((s, x) => s + x.syncsPerCommit, 0) / rounds.length;
  const median = rates[rates.length >> 1] ?? 0;
  console.log(
    `| ${v.name} | ${median.toFixed(0)} | ${(rates[0] ?? 0).toFixed(0)}–${(rates.at(-1) ?? 0).toFixed(0)} | ${syncs.toFixed(3)} |`,
  );
}
