/**
 * Bounded waiting for the chaos run (it runs outside vitest, so test/support/wait.ts is not for it): `until` polls a
 * condition and fails naming it after `timeoutMs` (a check that throws fails it at once); `sleep` waits.
 */
import { lifecycle } from './cleanup.ts';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (lifecycle.ended) throw new Error(`stopped while waiting for ${what}`);
    if (Date.now() > deadline) throw new Error(`not in ${timeoutMs} ms: ${what}`);
    await sleep(intervalMs);
  }
}

/** A free loopback TCP port (closed again before it is used: good enough on a private machine). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}
