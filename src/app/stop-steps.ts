import type { Logger } from 'pino';

/** How long a stop step may run before a warning names it. */
export const SLOW_STOP_STEP_MS = 5000;

/**
 * Runs the named steps of a stop one after another. A step still running after `slowAfterMs` is named in one
 * warning (and again when it ends), so a stop that hangs says on what; a step's failure ends the stop with it.
 */
export async function stopInOrder(
  steps: readonly (readonly [name: string, step: () => unknown])[],
  log: Logger,
  slowAfterMs = SLOW_STOP_STEP_MS,
): Promise<void> {
  for (const [name, step] of steps) {
    const started = Date.now();
    let slow = false;
    const timer = setTimeout(() => {
      slow = true;
      log.warn({ step: name }, `stopping: still waiting for ${name}`);
    }, slowAfterMs);
    try {
      await step();
    } finally {
      clearTimeout(timer);
      if (slow) log.warn({ step: name, ms: Date.now() - started }, `stopping: ${name} done`);
    }
  }
}
