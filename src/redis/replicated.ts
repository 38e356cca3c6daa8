import { AppError, messageOf } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';

export interface Replication {
  /** Replicas that must hold a write before it is acknowledged (0: the primary's answer is enough). */
  replicas: number;
  /** How long a write waits for them, in ms. */
  timeoutMs: number;
}

/**
 * What a store on Redis awaits after a write it is about to acknowledge and before it does: with `replicas` > 0,
 * Redis `WAIT replicas timeoutMs` on the connection that wrote (it covers every write that connection sent before
 * it); fewer replicas in time reject with SERVICE_UNAVAILABLE (`reason: "storage"`) and an error-level log line, so
 * the caller is never told a write that a failover may lose was done. With 0 it resolves at once, sending nothing.
 */
export function replicatedWrites(
  client: { wait(replicas: number, timeoutMs: number): Promise<unknown> },
  replication: Replication | undefined,
  log: Logger,
  what: string,
): (op: string) => Promise<void> {
  const { replicas = 0, timeoutMs = 0 } = replication ?? {};
  if (replicas === 0) return () => Promise.resolve();
  return async (op) => {
    let held: number;
    try {
      held = Number(await client.wait(replicas, timeoutMs));
    } catch (err) {
      held = -1;
      log.error({ err: messageOf(err) }, `${what}: WAIT after ${op} failed`);
    }
    if (held >= replicas) return;
    const cause = `${Math.max(held, 0)} of ${replicas} replicas acknowledged the ${op} within ${timeoutMs} ms`;
    log.error({ replicas, held, timeoutMs }, `${what}: ${op} not acknowledged: ${cause}`);
    throw new AppError('SERVICE_UNAVAILABLE', `The ${what} (Redis) did not replicate a write: ${cause}`, {
      reason: 'storage',
      cause,
    });
  };
}
