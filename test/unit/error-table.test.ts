/** The error table (code → HTTP status and JSON-RPC code), pinned by test/golden/error-table.json and listed in docs/api.md as it is. */
import { describe, expect, it } from 'vitest';
import { ERROR_TABLE } from '../../src/errors/index.ts';
import { API_DOC, expectGolden, sectionTables } from '../support/golden.ts';

describe('error table', () => {
  it('is the pinned table', () => {
    expectGolden('error-table', ERROR_TABLE);
  });

  it('is the table of errors in docs/api.md', () => {
    const readme = sectionTables(API_DOC, '## Errors').find((t) => t.header[0] === 'Code');
    const documented = Object.fromEntries(
      (readme?.rows ?? []).map(([code = '', status = '', rpc = '']) => [
        code,
        { status: status === '—' ? null : Number(status), rpc: Number(rpc) },
      ]),
    );
    expect(documented).toEqual(ERROR_TABLE);
  });
});
