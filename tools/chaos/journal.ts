/**
 * The chaos run's journal: timestamped lines in `<run folder>/journal.log` of what the run did and when (each fault
 * with its target and durations, each WebSocket client's connections), for a person reading a failed run kept with
 * `--keep` beside the instances' logs. Writes nothing until `openJournal` names the file.
 */
import { appendFileSync } from 'node:fs';
import { lifecycle } from './cleanup.ts';

let file: string | undefined;

export function openJournal(path: string): void {
  file = path;
}

export function journal(line: string): void {
  if (file !== undefined && !lifecycle.ended) appendFileSync(file, `${new Date().toISOString()} ${line}\n`);
}
