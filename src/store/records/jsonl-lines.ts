/**
 * The JSONL engine's file format: one line per commit, `{"c":[change…]}`, a change being a record as it is after the
 * commit (`{"ns","id","v","ix"?,"x"?,"val"}`: version, index entries as `[index, group, score]`, expiry) or its
 * removal (`{"ns","id","d":1}`), so a replay applies lines without deciding anything. A compacted file holds one line
 * per live record. Replay skips lines that do not parse (one warning), and reports where the last complete line ends:
 * what follows it is a torn tail of a write that never finished (never acknowledged), cut off at open.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { Logger } from '../../log/index.ts';
import { isMissing, NL } from '../jsonl-file.ts';
import type { Change, Held } from './memory-state.ts';

const putSchema = z.object({
  ns: z.string(),
  id: z.string(),
  v: z.number().int().positive(),
  ix: z.array(z.tuple([z.string(), z.string(), z.number()])).optional(),
  x: z.number().optional(),
  val: z.unknown(),
});
const deleteSchema = z.object({ ns: z.string(), id: z.string(), d: z.literal(1) });
const lineSchema = z.object({ c: z.array(z.union([deleteSchema, putSchema])) });

/** A change's JSON text (its value's text as kept, not serialised again). */
function changeJson(c: Change): string {
  const head = `{"ns":${JSON.stringify(c.ns)},"id":${JSON.stringify(c.id)}`;
  if (c.op === 'delete') return `${head},"d":1}`;
  const ix = c.index.length > 0 ? `,"ix":${JSON.stringify(c.index.map((e) => [e.index, e.group, e.score]))}` : '';
  const x = c.expiresAt !== undefined ? `,"x":${c.expiresAt}` : '';
  return `${head},"v":${c.version}${ix}${x},"val":${c.json}}`;
}

export const lineOf = (changes: readonly Change[]): string => `{"c":[${changes.map(changeJson).join(',')}]}\n`;

/** The bytes of a record's line in a compacted file. */
export const heldBytes = (h: Held): number => Buffer.byteLength(lineOf([{ op: 'put', ...h }]));

function changesOf(line: string): Change[] {
  return lineSchema.parse(JSON.parse(line)).c.map((c): Change => {
    if ('d' in c) return { op: 'delete', ns: c.ns, id: c.id };
    const index = (c.ix ?? []).map(([index, group, score]) => ({ index, group, score }));
    return { op: 'put', ns: c.ns, id: c.id, version: c.v, json: JSON.stringify(c.val), index, expiresAt: c.x };
  });
}

/**
 * Replays `path` into `apply`, line by line; answers the bytes up to the end of its last complete line, and whether
 * a torn tail follows them (undefined: no file).
 */
export async function replayLines(
  path: string,
  apply: (change: Change) => void,
  log: Logger,
): Promise<{ validBytes: number; torn: boolean } | undefined> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
  const validBytes = buf.lastIndexOf(NL) + 1;
  let skipped = 0;
  for (const line of buf.subarray(0, validBytes).toString('utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      changesOf(line).forEach(apply);
    } catch {
      skipped++;
    }
  }
  if (skipped > 0) log.warn({ path, skipped }, 'record store: unreadable lines were skipped');
  const torn = validBytes < buf.length;
  if (torn) log.warn({ path, bytes: buf.length - validBytes }, 'record store: a torn last line was cut off');
  return { validBytes, torn };
}
