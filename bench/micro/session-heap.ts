/**
 * What a new session holds, by kind of object: a compiled agentd (bench.yml, or the agent given) answers one
 * `message-sync` turn in each of N new sessions; two heap snapshots (after a full GC, by the probe) before and after
 * them; the objects of the second that the first did not have, grouped by type and name (a closure by its function's
 * name, an object by its constructor, `system / Context` for the variables closures capture), per session.
 *
 *   npm run build && npx tsx bench/micro/session-heap.ts [--sessions 500] [--agent bench.yml] [--top 40] [--by-file]
 *
 * Bytes are V8's shallow sizes; "per session" divides by N (a group under 1 object per session is shared or lazy).
 * The total includes each session's history (its first turn) and what the store keeps of it.
 */
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { httpLoad, rawRequest } from '../lib/http-load.ts';
import { startService, startSimulator } from '../lib/procs.ts';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '500' },
    agent: { type: 'string', default: 'bench.yml' },
    top: { type: 'string', default: '40' },
    'by-file': { type: 'boolean', default: false },
  },
});
const n = Number(values.sessions);
const top = Number(values.top);
/** Closures and contexts named by the file and line of their function. */
const byFile = values['by-file'];

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
      location_fields: string[];
    };
  };
  nodes: number[];
  edges: number[];
  locations: number[];
  strings: string[];
}
interface Node {
  key: string;
  size: number;
}

/**
 * The snapshot's JS-heap nodes by id; a closure is named by its function's file and line, a function context
 * (`system / Context`) by the file and line of the first closure that holds it.
 */
async function nodesOf(path: string): Promise<Map<number, Node>> {
  const s = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const { meta } = s.snapshot;
  const width = meta.node_fields.length;
  const at = (f: string) => meta.node_fields.indexOf(f);
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(at) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const ew = meta.edge_fields.length;
  const [eTypeAt, eNameAt, eToAt] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const edgeTypes = meta.edge_types[0];
  const types = meta.node_types[0];
  const firstEdge: number[] = [];
  for (let i = 0, e = 0; i < s.nodes.length; i += width) {
    firstEdge.push(e);
    e += s.nodes[i + edgeCountAt]! * ew;
  }
  const edgeTo = (node: number, name: string): number | undefined => {
    const from = firstEdge[node / width]!;
    const to = from + s.nodes[node + edgeCountAt]! * ew;
    for (let e = from; e < to; e += ew) {
      const t = edgeTypes[s.edges[e + eTypeAt]!];
      if (t !== 'element' && t !== 'hidden' && s.strings[s.edges[e + eNameAt]!] === name) return s.edges[e + eToAt]!;
    }
    return undefined;
  };
  const lw = meta.location_fields.length;
  const lineOf = new Map<number, number>();
  for (let i = 0; i < s.locations.length; i += lw) lineOf.set(s.locations[i]!, s.locations[i + 2]! + 1);
  const fileOf = (closure: number): string => {
    const shared = edgeTo(closure, 'shared');
    const script = shared === undefined ? undefined : edgeTo(shared, 'script');
    const name = script === undefined ? undefined : edgeTo(script, 'name');
    const full = name === undefined ? '?' : (s.strings[s.nodes[name + nameAt]!] ?? '?');
    return `${full.replace(/^.*\/(dist\/|node_modules\/)/, '$1')}:${lineOf.get(closure) ?? '?'}`;
  };
  /** The first strong retainer of each node (node index, edge name), to name an object by what holds it. */
  const retainer = new Map<number, [number, string]>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const from = firstEdge[i / width]!;
    const to = from + s.nodes[i + edgeCountAt]! * ew;
    for (let e = from; e < to; e += ew) {
      const t = edgeTypes[s.edges[e + eTypeAt]!];
      if (t === 'weak' || t === 'shortcut') continue;
      const target = s.edges[e + eToAt]!;
      if (retainer.has(target)) continue;
      const n = s.edges[e + eNameAt]!;
      retainer.set(target, [i, t === 'element' || t === 'hidden' ? `[${n}]` : (s.strings[n] ?? '?')]);
    }
  }
  const heldBy = (node: number, depth = 0): string => {
    const r = retainer.get(node);
    if (r === undefined) return '';
    const [holder, edge] = r;
    const type = types[s.nodes[holder + typeAt]!];
    if (['properties', 'table', 'descriptors', 'elements', 'map', 'lastSeq'].includes(edge) && depth < 3)
      return ` <- ${(s.strings[s.nodes[holder + nameAt]!] ?? '').slice(0, 30)}.${edge}${heldBy(holder, depth + 1)}`;
    return ` <- ${type}:${(s.strings[s.nodes[holder + nameAt]!] ?? '').slice(0, 30)}.${edge.slice(0, 30)}`;
  };
  const contextFile = new Map<number, string>();
  const out = new Map<number, Node>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]!] ?? 'unknown';
    if (type !== 'closure') continue;
    const ctx = edgeTo(i, 'context');
    if (ctx !== undefined && !contextFile.has(ctx)) contextFile.set(ctx, fileOf(i));
  }
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]!] ?? 'unknown';
    if (type === 'native' || type === 'synthetic' || type === 'code') continue;
    const raw = s.strings[s.nodes[i + nameAt]!] ?? '';
    let name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : raw.slice(0, 60);
    if (byFile && type === 'closure') name = `${name} ${fileOf(i)}`;
    if (byFile && raw === 'system / Context') name = `${name} ${contextFile.get(i) ?? '?'}`;
    else if (byFile && type !== 'closure') name += heldBy(i);
    out.set(s.nodes[i + idAt]!, { key: `${type}: ${name}`, size: s.nodes[i + sizeAt]! });
  }
  return out;
}

const sim = await startSimulator();
const svc = await startService({ agent: values.agent, modelUrl: sim.url });
const turns = async (prefix: string, count: number) => {
  const http = await httpLoad({
    port: svc.port,
    connections: 10,
    requestsPerConnection: count / 10,
    request: (c, k) =>
      rawRequest('POST', '/api/message-sync', JSON.stringify({ message: 'hello', sessionId: `${prefix}-${c}-${k}` })),
  });
  if (http.errors) throw new Error(`message-sync failed: ${JSON.stringify(http.statuses)}`);
};
try {
  await turns('warm', 200); // code paths compiled, caches filled
  const a = join(tmpdir(), `session-heap-a-${process.pid}.heapsnapshot`);
  const b = join(tmpdir(), `session-heap-b-${process.pid}.heapsnapshot`);
  const before = await svc.stats();
  await svc.heapSnapshot(a);
  await turns('new', n);
  const after = await svc.stats();
  await svc.heapSnapshot(b);
  const [na, nb] = [await nodesOf(a), await nodesOf(b)];
  const groups = new Map<string, { bytes: number; count: number }>();
  let total = 0;
  for (const [id, node] of nb) {
    if (na.has(id)) continue;
    total += node.size;
    const g = groups.get(node.key) ?? { bytes: 0, count: 0 };
    g.bytes += node.size;
    g.count++;
    groups.set(node.key, g);
  }
  await Promise.all([rm(a), rm(b)]);
  const heapDelta = (after.memory.heapUsed - before.memory.heapUsed) / n;
  console.log(`${n} new sessions: heapUsed +${(heapDelta / 1024).toFixed(2)} KB per session (after GC)`);
  console.log(`new objects in the snapshot: ${(total / n / 1024).toFixed(2)} KB per session`);
  console.log('bytes/session  objects/session  type: name');
  for (const [key, g] of [...groups].sort((x, y) => y[1].bytes - x[1].bytes).slice(0, top))
    console.log(`${(g.bytes / n).toFixed(0).padStart(8)}  ${(g.count / n).toFixed(2).padStart(8)}  ${key}`);
} finally {
  await svc.stop();
  await sim.stop();
}
