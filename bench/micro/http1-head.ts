/**
 * The node engine's request-head reader (src/http/engine/http1-server/head-reader.ts), alone: µs per head for a
 * REST request's head arriving whole (the usual case, which must not get dearer), and ms of CPU for a 16 KiB head
 * arriving a byte per read (a slow client; issue 58 measured ~350 ms when each read re-parsed from the start).
 * `--parser <module>` measures another module exporting `parseRequestHead(data, maxBytes)` the old way instead
 * (the whole pending buffer given on each read), e.g. the parser of an earlier commit copied aside.
 *
 *   npx tsx bench/micro/http1-head.ts [--parser /tmp/old-request-head.ts]
 */
import { HeadReader } from '../../src/http/engine/http1-server/index.ts';

const MAX = 16 * 1024;
const REST = Buffer.from(
  'POST /api/message-sync HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nUser-Agent: bench/1.0\r\nAccept: application/json\r\n' +
    'Authorization: Bearer 0123456789abcdef0123456789abcdef\r\nContent-Type: application/json\r\nContent-Length: 42\r\n' +
    'Connection: keep-alive\r\n\r\n',
  'latin1',
);
const SLOW = Buffer.from(`GET / HTTP/1.1\r\nHost: h\r\nX-Pad: ${'a'.repeat(MAX - 64)}\r\n\r\n`, 'latin1');

type Reader = (chunks: Buffer[]) => unknown;

/** The reader of this tree: one HeadReader, each read pushed as it comes. */
const incremental: Reader = (chunks) => {
  const reader = new HeadReader(MAX);
  let head;
  for (const chunk of chunks) head = reader.push(chunk);
  return head;
};

/** A parser of the old shape: the bytes so far concatenated and parsed again on each read, as node-connection.ts did. */
function oldWay(parse: (data: Buffer, max: number) => unknown): Reader {
  return (chunks) => {
    let pending: Buffer = Buffer.alloc(0);
    let head;
    for (const chunk of chunks) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      head = parse(pending, MAX);
    }
    return head;
  };
}

function measure(read: Reader): { restUs: number; slowMs: number } {
  const whole = [REST];
  for (let i = 0; i < 20_000; i++) read(whole); // warm-up
  const n = 200_000;
  let t0 = performance.now();
  for (let i = 0; i < n; i++) if (!read(whole)) throw new Error('no head');
  const restUs = ((performance.now() - t0) * 1000) / n;
  const bytes = [...SLOW].map((b) => Buffer.from([b]));
  const cpu = process.cpuUsage();
  t0 = performance.now();
  if (!read(bytes)) throw new Error('no head');
  const { user, system } = process.cpuUsage(cpu);
  return { restUs, slowMs: (user + system) / 1000 };
}

const at = process.argv.indexOf('--parser');
const module = at > 0 ? process.argv[at + 1] : undefined;
const read = module
  ? oldWay(((await import(module)) as { parseRequestHead: (d: Buffer, m: number) => unknown }).parseRequestHead)
  : incremental;
const runs = [measure(read), measure(read), measure(read)];
const best = (key: 'restUs' | 'slowMs') => Math.min(...runs.map((r) => r[key]));
console.log(`${module ?? 'head-reader.ts'}`);
console.log(`  REST head (${REST.length} B) whole: ${best('restUs').toFixed(3)} µs per head (best of 3)`);
console.log(`  ${SLOW.length} B head, a byte per read: ${best('slowMs').toFixed(1)} ms CPU (best of 3)`);
