/**
 * The replay of a small JSONL file of records (the webhook outbox, the schedule store: one record a line, each
 * written and fsync'd before it applies). Every line is handed to `apply` in file order; a line that does not parse,
 * or that `apply` refuses by throwing (a torn last line after a crash, a record from an unknown version), is skipped
 * with one warning for the file, naming `what`.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '../log/index.ts';
import { isMissing } from './jsonl-file.ts';

/** Replays `path` into `apply`; false when the file does not exist. */
export async function replayRecords<T>(
  path: string,
  apply: (record: T) => void,
  log: Logger,
  what: string,
): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (isMissing(e)) return false;
    throw e;
  }
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      apply(JSON.parse(line) as T);
    } catch {
      skipped++;
    }
  }
  if (skipped > 0) log.warn({ path, skipped }, `${what}: unreadable lines were skipped`);
  return true;
}
