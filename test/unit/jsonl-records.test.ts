/**
 * The replay the small JSONL files share (src/store/jsonl-records.ts: the webhook outbox, the schedule store): every
 * readable line applied in order, unreadable ones and a torn last line skipped with one warning, a missing file told.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { replayRecords } from '../../src/store/jsonl-records.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** A logger that keeps its warnings. */
function recordingLog() {
  const warnings: Record<string, unknown>[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  return { log, warnings };
}

describe('replayRecords', () => {
  it('applies every readable line in order and skips the others with one warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-records-'));
    dirs.push(dir);
    const path = join(dir, 'records.jsonl');
    await writeFile(path, '{"n":1}\n\nnot json\n{"n":2}\n{"n":3,"bad":true}\n{"n":4}\n{"n":');
    const { log, warnings } = recordingLog();
    const seen: number[] = [];
    const found = await replayRecords<{ n: number; bad?: boolean }>(
      path,
      (r) => {
        if (r.bad) throw new Error('refused');
        seen.push(r.n);
      },
      log,
      'test store',
    );
    expect(found).toBe(true);
    expect(seen).toEqual([1, 2, 4]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ path, skipped: 3, msg: 'test store: unreadable lines were skipped' });
  });

  it('answers false for a missing file', async () => {
    const { log, warnings } = recordingLog();
    expect(await replayRecords(join(tmpdir(), 'agentd-no-such-file.jsonl'), () => {}, log, 'x')).toBe(false);
    expect(warnings).toEqual([]);
  });
});
