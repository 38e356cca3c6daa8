/** The stdio transport tells why a server went away, also when it fails while agentd is closing it. */
import { describe, expect, it } from 'vitest';
import { ChildProcessTransport } from '../../src/tools/mcp/stdio-transport.ts';
import { createLogger } from '../../src/log/index.ts';

/**
 * A server that does nothing until its stdin ends, then writes `line` to stderr and exits with `code`. Its grace
 * is long: on a busy machine node may take longer than the default half second to start and see its stdin end,
 * and a server killed after its grace has not failed on its own.
 */
const onStdinEnd = (code: number, line: string) =>
  new ChildProcessTransport({
    command: process.execPath,
    args: [
      '-e',
      `process.stdin.resume(); process.stdin.on('end', () => { console.error(${JSON.stringify(line)}); process.exit(${code}); });`,
    ],
    env: {},
    log: createLogger('silent'),
    maxMessageBytes: 1_000_000,
    graceMs: 60_000,
  });

describe('stdio transport exit reason', () => {
  it('names the cause of a server that fails on its own while it is being closed (a failed connect closes it)', async () => {
    const transport = onStdinEnd(3, 'fixture: refusing to start');
    await transport.start();
    await transport.close();
    expect(transport.exitReason).toBe('process exited with code 3: fixture: refusing to start');
  });

  it('has no reason for a server that ends cleanly when closed', async () => {
    const transport = onStdinEnd(0, 'bye');
    await transport.start();
    await transport.close();
    expect(transport.exitReason).toBeUndefined();
  });
});
