/**
 * agentd's HTTP/1.1 server wire held to Node's llhttp: the same bytes framed by both (framing.ts), over the smuggling
 * corpus (smuggling-corpus.ts) and llhttp's own request vectors (test/support/llhttp-vectors.ts: the copy in
 * test/fixtures/llhttp, or AGENTD_LLHTTP_VECTORS; skipped with a notice when absent, failed when absent on CI). Every
 * vector runs, lenient-mode ones included (node:http is strict: they are compared with what strict llhttp does). A
 * difference must be stricter and listed, with its reason: in the corpus, or in llhttp-allowlist.json for a vector.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameWithAgentd, NodeFramer, relation } from './framing.ts';
import { allVectors, countHttpBlocks, findLlhttpVectors } from '../../support/llhttp-vectors.ts';
import { SMUGGLING_CORPUS } from './smuggling-corpus.ts';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

interface Allowed {
  file: string;
  heading: string;
  reason: string;
}
const ALLOWED: Allowed[] = JSON.parse(
  readFileSync(new URL('./llhttp-allowlist.json', import.meta.url), 'utf8'),
) as Allowed[];

const llhttp = new NodeFramer();
beforeAll(() => llhttp.start());
afterAll(() => llhttp.stop());

const compare = async (wire: Buffer) => {
  const agentd = frameWithAgentd(wire);
  const node = await llhttp.frame(wire);
  return { agentd, node, relation: relation(agentd, node) };
};

describe('the smuggling corpus', () => {
  it.each(SMUGGLING_CORPUS)('$name', async ({ wire, stricter }) => {
    const seen = await compare(Buffer.from(wire, 'latin1'));
    expect({ ...seen, relation: seen.relation }).toMatchObject({ relation: stricter ? 'stricter' : 'same' });
  });
});

const lookup = findLlhttpVectors();
const folder = lookup.dir;
if (!folder && !lookup.required)
  console.warn(`${lookup.missing}: the request vectors' differential test is skipped (docs/development.md)`);

describe.skipIf(!folder && !lookup.required)("llhttp's request vectors", () => {
  const vectors = folder ? allVectors(folder, 'request') : [];

  it('are at hand (required on CI)', () => {
    expect(lookup.missing, 'set AGENTD_LLHTTP_VECTORS or restore test/fixtures/llhttp').toBeUndefined();
  });

  it('are read: one vector for each http block of every file, each with its input', () => {
    expect(vectors.length).toBeGreaterThan(100);
    expect(vectors.length).toBe(countHttpBlocks(folder as string, 'request'));
    expect(vectors.filter((v) => v.input === undefined).map((v) => `${v.file} ${v.heading}`)).toEqual([]);
  });

  it('are framed as llhttp frames them, or more strictly where the allow-list says why', async () => {
    const differing: Array<{ file: string; heading: string; relation: string; agentd: unknown; node: unknown }> = [];
    for (const vector of vectors) {
      const seen = await compare(vector.input as Buffer);
      if (seen.relation !== 'same') differing.push({ file: vector.file, heading: vector.heading, ...seen });
    }
    const allowed = (d: { file: string; heading: string }) =>
      ALLOWED.some((a) => a.file === d.file && a.heading === d.heading);
    console.info(
      `llhttp request vectors: ${vectors.length} framed, ${vectors.length - differing.length} as llhttp, ${differing.length} stricter as listed in llhttp-allowlist.json`,
    );
    // Stricter and listed, nothing else; and no entry left over that no longer differs.
    expect(differing.filter((d) => d.relation !== 'stricter' || !allowed(d))).toEqual([]);
    // node:http's parser changes between Node lines: the list is kept on the machines' line (20), where no entry may
    // be left over; on 22 and 24 an entry that node:http no longer frames apart is fine.
    if (NODE_MAJOR === 20)
      expect(ALLOWED.filter((a) => !differing.some((d) => d.file === a.file && d.heading === a.heading))).toEqual([]);
  });
});
