/**
 * What a heap snapshot says was freed between two moments of one process: the objects of the first
 * snapshot whose ids (stable within a process) the second no longer has, in bytes, split into data
 * and compiled code.
 *
 * - `code`: V8's compiled code and its metadata (snapshot type `code`: instruction streams, deopt
 *   data, relocation info, source positions, inline caches). Optimized code embeds the objects it was
 *   specialized for and is discarded when they die, so it is freed with whatever it saw, then
 *   recompiled for the next; it is bounded by the program's functions, not by what a session holds.
 * - `data`: everything else on the JS heap: objects, arrays, strings, closures, contexts, maps.
 * - Native (`native`, `synthetic`) nodes are left out: they are not on the JS heap and their ids are
 *   not stable between snapshots.
 */
import { readFile } from 'node:fs/promises';

export interface Freed {
  dataBytes: number;
  codeBytes: number;
  /** Data bytes by node type (object, string, array, closure, ...). */
  dataByType: Record<string, number>;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
}

const NOT_JS_HEAP = new Set(['native', 'synthetic']);

async function nodesOf(path: string): Promise<Map<number, { type: string; size: number }>> {
  const s = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, idAt, sizeAt] = ['type', 'id', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = s.snapshot.meta.node_types[0];
  const out = new Map<number, { type: string; size: number }>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]!] ?? 'unknown';
    if (!NOT_JS_HEAP.has(type)) out.set(s.nodes[i + idAt]!, { type, size: s.nodes[i + sizeAt]! });
  }
  return out;
}

export async function freedBetween(before: string, after: string): Promise<Freed> {
  const [a, b] = [await nodesOf(before), await nodesOf(after)];
  const freed: Freed = { dataBytes: 0, codeBytes: 0, dataByType: {} };
  for (const [id, { type, size }] of a) {
    if (b.has(id)) continue;
    if (type === 'code') freed.codeBytes += size;
    else {
      freed.dataBytes += size;
      freed.dataByType[type] = (freed.dataByType[type] ?? 0) + size;
    }
  }
  return freed;
}
