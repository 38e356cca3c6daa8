/**
 * Property: whatever is mutated inside framing values (Content-Length, Transfer-Encoding) and chunk lines (sizes,
 * extensions, trailers), agentd never frames a stream into more requests than llhttp (node:http) does, nor into
 * different ones (framing.ts `relation`: never `looser`). A few hundred cases in the normal run; more with
 * `HTTP1_FUZZ_RUNS=20000 npx vitest run test/int/http1-server/fuzz.test.ts` (docs/development.md), and
 * `HTTP1_FUZZ_SEED` to replay a failure fast-check printed.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { frameWithAgentd, NodeFramer, relation } from './framing.ts';

const RUNS = Number(process.env.HTTP1_FUZZ_RUNS) || 300;
const SEED = process.env.HTTP1_FUZZ_SEED === undefined ? undefined : Number(process.env.HTTP1_FUZZ_SEED);

/** What gets inserted: whitespace of every kind, list and parameter syntax, digits, codings, control and high bytes. */
const PIECES = [
  ' ',
  '\t',
  '\xa0',
  '\x0b',
  '\x0c',
  '\x85',
  '\r',
  '\n',
  '\r\n',
  '\0',
  '\x7f',
  '\xff',
  ',',
  ';',
  '=',
  '"',
  '\\',
  ':',
  '0',
  '3',
  '8',
  'a',
  'f',
  'x',
  '+',
  '-',
  'chunked',
  'identity',
  'gzip',
];

type Edit = { at: number; kind: 'insert' | 'replace' | 'delete'; piece: string };

const edit = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom<Edit['kind']>('insert', 'replace', 'delete'),
  piece: fc.constantFrom(...PIECES),
});

/** `seed` with `edits` applied, each at its position modulo the text's length. */
function mutate(seed: string, edits: Edit[]): string {
  let text = seed;
  for (const { at, kind, piece } of edits) {
    const i = text.length === 0 ? 0 : at % (text.length + 1);
    if (kind === 'insert') text = text.slice(0, i) + piece + text.slice(i);
    else if (kind === 'replace') text = text.slice(0, i) + piece + text.slice(i + 1);
    else text = text.slice(0, i) + text.slice(i + 1);
  }
  return text;
}

const value = (seed: string) => fc.array(edit, { maxLength: 4 }).map((edits) => mutate(seed, edits));

const POST = 'POST / HTTP/1.1\r\nHost: h\r\n';
const NEXT = 'GET /next HTTP/1.1\r\nHost: h\r\n\r\n';

/** A stream with its framing mutated: one of the classic shapes, each value of it edited. */
const stream = fc.oneof(
  value('3').map((cl) => `${POST}Content-Length: ${cl}\r\n\r\nabcdefgh${NEXT}`),
  fc
    .tuple(value('chunked'), value('3'), value('0'))
    .map(([te, size, last]) => `${POST}Transfer-Encoding: ${te}\r\n\r\n${size}\r\nabc\r\n${last}\r\n\r\n${NEXT}`),
  fc
    .tuple(value('chunked'), value('3'))
    .map(([te, cl]) => `${POST}Transfer-Encoding: ${te}\r\nContent-Length: ${cl}\r\n\r\n3\r\nabc\r\n0\r\n\r\n${NEXT}`),
  fc
    .tuple(value('3;a=b'), value('X: y'))
    .map(
      ([size, trailer]) => `${POST}Transfer-Encoding: chunked\r\n\r\n${size}\r\nabc\r\n0\r\n${trailer}\r\n\r\n${NEXT}`,
    ),
  fc
    .tuple(value('3'), value('3'))
    .map(([a, b]) => `${POST}Content-Length: ${a}\r\nContent-Length: ${b}\r\n\r\nabcdefgh${NEXT}`),
);

describe('agentd frames mutated streams never beyond llhttp', () => {
  const llhttp = new NodeFramer();
  beforeAll(() => llhttp.start());
  afterAll(() => llhttp.stop());

  it(`holds for ${RUNS} streams`, async () => {
    await fc.assert(
      fc.asyncProperty(stream, async (wire) => {
        const bytes = Buffer.from(wire, 'latin1');
        const agentd = frameWithAgentd(bytes);
        const node = await llhttp.frame(bytes);
        if (relation(agentd, node) === 'looser')
          throw new Error(`agentd ${JSON.stringify(agentd)} beyond llhttp ${JSON.stringify(node)}`);
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  });
});
