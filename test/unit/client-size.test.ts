/**
 * The browser build of the client keeps its size budget (docs/client.md): at most 26 KiB minified and 9 KiB
 * gzipped (19.0 and 6.7 KiB when the budget was 24 and 8 KiB; 24.4 and 8.5 KiB when the verifiers that refuse by
 * default took it past that), and it is the client's own files only: no schema, no server module, no package.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bundleClient } from '../support/client-bundle.ts';

export const BUDGET = { minified: 26 * 1024, gzipped: 9 * 1024 };

describe('the client in a browser', () => {
  it('fits its size budget, with nothing but src/client in it', async () => {
    const { code, inputs } = await bundleClient();
    expect(inputs.filter((file) => !file.startsWith('src/client/'))).toEqual([]);
    expect(Buffer.byteLength(code)).toBeLessThanOrEqual(BUDGET.minified);
    expect(gzipSync(code).length).toBeLessThanOrEqual(BUDGET.gzipped);
  });
});
