/**
 * What the tests that need a system program (redis-server, PostgreSQL, Chromium) share: a program that is missing
 * skips its tests with a visible notice, unless its `AGENTD_REQUIRE_*` flag is set (CI), where the absence is a
 * failure; and a free loopback port for a server they start.
 */
import { createServer } from 'node:net';

/** `found`, else (after the notice, or throwing under `flag=1`) false: `what` names the tests in the notice. */
export function requiredOrSkipped(found: boolean, what: string, message: string, flag: string): boolean {
  if (found) return true;
  if (process.env[flag] === '1') throw new Error(`${message} (${flag}=1)`);
  console.warn(`\n[${what} tests skipped] ${message}\n`);
  return false;
}

/** A port free on 127.0.0.1 now (a server that cannot take port 0 itself takes this one). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
