/**
 * Where the differential tests find llhttp's vectors (test/support/llhttp-vectors.ts), and that CI cannot skip them:
 * with CI=true (or AGENTD_REQUIRE_LLHTTP=1) a missing copy is required, so the tests fail instead of skipping.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countHttpBlocks, findLlhttpVectors } from '../support/llhttp-vectors.ts';
import { ROOT } from '../support/paths.ts';

const scratch = mkdtempSync(join(tmpdir(), 'agentd-llhttp-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** A checkout with no vectors anywhere: scratch/repo, beside no shared/ folder. */
const bare = join(scratch, 'repo');
mkdirSync(bare);

describe("llhttp's vectors", () => {
  it('are committed with the repository, with llhttp 9.4.2 counts (166 request blocks, 85 response blocks)', () => {
    const found = findLlhttpVectors({}, ROOT);
    expect(found).toMatchObject({ dir: join(ROOT, 'test', 'fixtures', 'llhttp'), missing: undefined, required: false });
    expect(countHttpBlocks(found.dir as string, 'request')).toBe(166);
    expect(countHttpBlocks(found.dir as string, 'response')).toBe(85);
  });

  it('are required on CI: missing there is a failure, not a skip', () => {
    expect(findLlhttpVectors({}, bare)).toMatchObject({ dir: undefined, required: false });
    expect(findLlhttpVectors({ CI: 'true' }, bare)).toMatchObject({ dir: undefined, required: true });
    expect(findLlhttpVectors({ AGENTD_REQUIRE_LLHTTP: '1' }, bare)).toMatchObject({ dir: undefined, required: true });
    expect(findLlhttpVectors({ CI: 'true' }, bare).missing).toContain(join(bare, 'test', 'fixtures', 'llhttp'));
  });

  it('are found beside the checkout at ../shared/vendor/llhttp/test when the repository has none', () => {
    const shared = join(scratch, 'shared', 'vendor', 'llhttp', 'test');
    mkdirSync(join(shared, 'request'), { recursive: true });
    mkdirSync(join(shared, 'response'));
    expect(findLlhttpVectors({ CI: 'true' }, bare)).toMatchObject({ dir: shared, required: true });
    rmSync(join(scratch, 'shared'), { recursive: true });
  });

  it('are taken from AGENTD_LLHTTP_VECTORS first, and a folder it names without them is an error', () => {
    const other = join(ROOT, 'test', 'fixtures', 'llhttp');
    expect(findLlhttpVectors({ AGENTD_LLHTTP_VECTORS: other }, bare)).toMatchObject({ dir: other, required: false });
    const wrong = findLlhttpVectors({ AGENTD_LLHTTP_VECTORS: scratch }, ROOT);
    expect(wrong).toMatchObject({ dir: undefined, required: true });
    expect(wrong.missing).toContain('AGENTD_LLHTTP_VECTORS');
  });
});
