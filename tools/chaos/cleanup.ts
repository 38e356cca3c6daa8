/**
 * Everything a chaos run starts, and how it is all stopped: child processes (each in a process group of its own, so a
 * group kill takes what it spawned too; a paused one is continued first) and cleanup steps (servers to close, the
 * temporary folder), run once, in reverse order of registration, each bounded (3 s), on the run's end, on an error,
 * on SIGINT/SIGTERM and by the run's watchdog. Once a stop is asked (`lifecycle.ended`), a child started anyway (a
 * restart already under way) is killed at once, and the parts that loop or write stop doing so. `onExit` steps run
 * synchronously as the process exits, whatever ends it (the folder's last removal).
 */
import type { ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();
const steps: (() => Promise<void> | void)[] = [];
let running: Promise<void> | undefined;

export const lifecycle = { ended: false };

/** Keeps `child` (started with `detached: true`) until it exits. */
export function trackChild(child: ChildProcess): void {
  if (lifecycle.ended) {
    signalGroup(child, 'SIGKILL');
    return;
  }
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** Signals the child's whole process group (the child alone when that fails). */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // gone already
    }
  }
}

export function onCleanup(step: () => Promise<void> | void): void {
  steps.push(step);
}

export function onExit(step: () => void): void {
  process.once('exit', step);
}

const bounded = (p: Promise<void> | void, ms: number) =>
  Promise.race([p, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);

/** Stops every child and runs every cleanup step; the same promise on every call. */
export function cleanupAll(): Promise<void> {
  lifecycle.ended = true;
  running ??= (async () => {
    const exits = [...children].map((child) => new Promise<void>((resolve) => child.once('exit', () => resolve())));
    for (const child of children) {
      signalGroup(child, 'SIGCONT');
      signalGroup(child, 'SIGKILL');
    }
    await bounded(
      Promise.all(exits).then(() => undefined),
      3000,
    );
    for (const step of steps.reverse()) {
      try {
        await bounded(step(), 3000);
      } catch (e) {
        process.stderr.write(`chaos: cleanup step failed: ${e instanceof Error ? e.message : String(e)}\n`);
      }
    }
  })();
  return running;
}

/** On SIGINT/SIGTERM: clean up, then exit 130 (143), saying how to replay. */
export function cleanupOnSignals(replay: () => string): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (lifecycle.ended) return; // a second signal (a terminal sends one to every process of the group) changes nothing
      process.stderr.write(`\nchaos: ${signal}: stopping every process and removing the run's folder\n${replay()}\n`);
      void cleanupAll().finally(() => process.exit(code));
    });
  }
}
