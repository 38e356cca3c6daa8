/**
 * The URL policy end to end, inside a network namespace with only loopback (`unshare -n`, as root):
 * there a connection to any other address fails at once with ENETUNREACH, so even a broken guard
 * sends no packet off this machine. Skipped, with a notice, where network namespaces are not available.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function canUnshareNet(): boolean {
  try {
    execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const available = canUnshareNet();
if (!available) console.warn('ssrf-netns: SKIPPED — needs root with `unshare -n` (network namespaces)');

interface Answer {
  url: string;
  status: number;
  code?: string;
  details?: Record<string, unknown>;
}

function probe(allowPrivate: boolean, urls: string[]): Answer[] {
  const script = 'ip link set lo up && exec node test/support/ssrf-probe.mjs "$@"';
  const out = execFileSync('unshare', ['-n', 'sh', '-c', script, 'probe', String(allowPrivate), ...urls], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Answer);
}

describe.skipIf(!available)('runtime http servers: the URL policy in a loopback-only network namespace', () => {
  it('refuses metadata, link-local and unspecified addresses in every spelling, before any socket', () => {
    const answers = probe(true, [
      'http://169.254.169.254/mcp',
      'http://2852039166/mcp',
      'http://[::ffff:169.254.169.254]/mcp',
      'http://metadata.google.internal/mcp',
      'http://169.254.10.10/mcp',
      'http://0.0.0.0:80/mcp',
    ]);
    expect(answers.map((a) => [a.status, a.code, a.details?.reason])).toEqual([
      [400, 'INVALID_REQUEST', 'metadata'],
      [400, 'INVALID_REQUEST', 'metadata'],
      [400, 'INVALID_REQUEST', 'metadata'],
      [400, 'INVALID_REQUEST', 'metadata'],
      [400, 'INVALID_REQUEST', 'link_local'],
      [400, 'INVALID_REQUEST', 'unspecified'],
    ]);
  }, 90_000);

  it('without private networks refuses private, loopback and local names; with them, failures all say "could not connect"', () => {
    const strict = probe(false, ['http://10.0.0.1/mcp', 'http://127.0.0.1:9/mcp', 'http://localhost:9/mcp']);
    expect(strict.map((a) => [a.status, a.details?.reason])).toEqual([
      [400, 'private_network'],
      [400, 'private_network'],
      [400, 'private_network'],
    ]);
    // Allowed, and failing: an unreachable network and a closed port read the same.
    const open = probe(true, ['http://10.0.0.1/mcp', 'http://127.0.0.1:9/mcp']);
    expect(open.map((a) => [a.status, a.code, a.details?.reason])).toEqual([
      [500, 'AGENT_ERROR', 'could not connect to the server'],
      [500, 'AGENT_ERROR', 'could not connect to the server'],
    ]);
  }, 90_000);
});
