import { describe, expect, it } from 'vitest';
import { stderrCause, StderrLines, STDERR_HEAD_LINES, STDERR_TAIL_LINES } from '../../src/tools/mcp/stderr-cause.ts';

const lines = (text: string) => text.split('\n');

// Real stderr, as Node 20 and npm 11 print it.
const MISSING_SCRIPT = lines(`node:internal/modules/cjs/loader:1210
  throw err;
  ^

Error: Cannot find module '/x/server.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Module._load (node:internal/modules/cjs/loader:1038:27)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2`);

const MISSING_PACKAGE = lines(`npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/nope
npm error 404
npm error 404  'nope@*' is not in this registry.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-23T10_39_18_902Z-debug-0.log`);

const OFFLINE = lines(`npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://registry.npmjs.org/nope failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org
npm error network This is a problem related to network connectivity.
npm error A complete log of this run can be found in: /root/.npm/_logs/x.log`);

describe('the cause of a stdio server failure, from its stderr', () => {
  it('is the error line of a missing script, not the Node banner', () => {
    expect(stderrCause(MISSING_SCRIPT)).toBe("Error: Cannot find module '/x/server.js'");
  });

  it("is npm's message for a package missing from the registry, not its log pointer", () => {
    expect(stderrCause(MISSING_PACKAGE)).toBe(
      "npm error 404 Not Found - GET https://registry.npmjs.org/nope | npm error 404  'nope@*' is not in this registry.",
    );
  });

  it("is npm's network message when offline", () => {
    expect(stderrCause(OFFLINE)).toMatch(/^npm error network request to .* failed, reason: getaddrinfo ENOTFOUND/);
  });

  it('falls back to the last plain lines, and to nothing when stderr says nothing', () => {
    expect(stderrCause(['starting', 'fixture: refusing to start'])).toBe('starting | fixture: refusing to start');
    expect(stderrCause(['', 'Node.js v22.1.0'])).toBeUndefined();
  });

  it('is bounded', () => {
    const cause =
      stderrCause([`Error: ${'x'.repeat(5000)}`, `Error: ${'y'.repeat(5000)}`, 'Error: z', 'Error: w']) ?? '';
    expect(cause.length).toBeLessThanOrEqual(600);
  });

  it('keeps the first and the last lines of a long stderr, each bounded', () => {
    const kept = new StderrLines();
    for (let i = 0; i < 1000; i++) kept.push(`line ${i} ${'.'.repeat(1000)}`);
    const all = kept.lines();
    expect(all).toHaveLength(STDERR_HEAD_LINES + STDERR_TAIL_LINES);
    expect(all[0]).toMatch(/^line 0 /);
    expect(all.at(-1)).toMatch(/^line 999 /);
    expect(Math.max(...all.map((l) => l.length))).toBeLessThanOrEqual(300);
  });
});
