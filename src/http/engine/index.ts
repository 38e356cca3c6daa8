/**
 * Which engine serves HTTP and WebSockets, chosen by `selectEngine` from `AGENTD_ENGINE` (the app
 * selects at creation: src/app.ts; the native addon is tried once per process, its outcome kept):
 *
 * - `auto` (default): uWebSockets.js when its native addon loads here, else Node's sockets + `ws`, with
 *   the loader's reason kept for the one start-up log line that says so;
 * - `uws`: uWebSockets.js or nothing: when it cannot load, `listen` rejects naming the cause (the
 *   process exits 1 before serving);
 * - `node`: Node's sockets + `ws` without trying the addon.
 */
import { nodeEngine } from './node.ts';
import type { Engine, EngineApp, EngineName } from './types.ts';
import { loadUws } from './uws.ts';

export type * from './types.ts';
export { addressText, formatIp } from './address.ts';
export { createInject, type Inject, type InjectOptions } from './inject.ts';
export { slowConsumer } from './ws-close.ts';

/** Why uWebSockets.js did not load: `reason`, its error's first line, and `detail`, the underlying error. */
type LoadFailure = { reason: string; detail?: string };

export interface EngineSelection {
  engine: Engine;
  /**
   * Set when `auto` fell back to node: why uWebSockets.js did not load and `summary`, the one sentence a person
   * reads at start-up (`fallbackSummary`).
   */
  fallback?: LoadFailure & { summary: string };
}

/** The C library version this process runs on (Linux with glibc), else undefined. */
function glibcVersion(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}

/**
 * Why uWebSockets.js did not load, in one sentence that names the real cause (the package's own first line
 * blames the Node version or the platform whatever the cause), ending with the engine used instead.
 */
export function fallbackSummary(why: LoadFailure, glibc = glibcVersion()): string {
  const text = `${why.reason}\n${why.detail ?? ''}`;
  const needed = /GLIBC_(\d+(?:\.\d+)+)'? not found/.exec(text)?.[1];
  if (needed)
    return `uWebSockets.js needs glibc ${needed}, this host has ${glibc ?? 'an older one'}: using the node engine`;
  if (/Cannot find (module|package) '?uWebSockets\.js/.test(text))
    return 'uWebSockets.js is not installed: using the node engine';
  if (/musl/i.test(text)) return 'uWebSockets.js has no build for musl (e.g. Alpine): using the node engine';
  return `uWebSockets.js cannot load here (${why.detail ?? why.reason}): using the node engine`;
}

/** The first line of a load error and, when it says more below, its last line (the dynamic loader's words). */
function describe(err: unknown): LoadFailure {
  const lines = (err instanceof Error ? err.message : String(err))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const reason = lines[0] ?? 'unknown error';
  const last = lines.at(-1);
  return last && last !== reason ? { reason, detail: last } : { reason };
}

/** An engine that cannot serve: routes are accepted, `listen` rejects with `error`. */
function unavailable(name: EngineName, error: Error): Engine {
  const app: EngineApp = {
    http: () => undefined,
    websocket: () => undefined,
    publish: () => undefined,
    listen: () => Promise.reject(error),
    close: () => undefined,
  };
  return { name, label: `${name} (unavailable)`, createApp: () => app };
}

type UwsAttempt = { engine: Engine } | { fallback: NonNullable<EngineSelection['fallback']> };
let uwsAttempt: UwsAttempt | undefined;
/**
 * The process's one attempt to load the addon, kept for every app created later: Node does not cache a failed
 * require, and the sentence saying why reads a process report (tens of milliseconds).
 */
function attemptUws(): UwsAttempt {
  if (!uwsAttempt) {
    try {
      uwsAttempt = { engine: loadUws() };
    } catch (err) {
      const why = describe(err);
      uwsAttempt = { fallback: { ...why, summary: fallbackSummary(why) } };
    }
  }
  return uwsAttempt;
}

export function selectEngine(choice: string | undefined): EngineSelection {
  const wanted = choice?.trim().toLowerCase() || 'auto';
  if (wanted === 'node') return { engine: nodeEngine };
  if (wanted !== 'uws' && wanted !== 'auto') {
    return {
      engine: unavailable('node', new Error(`AGENTD_ENGINE must be auto, uws or node, not ${JSON.stringify(choice)}`)),
    };
  }
  const attempt = attemptUws();
  if ('engine' in attempt) return attempt;
  const { fallback } = attempt;
  if (wanted === 'auto') return { engine: nodeEngine, fallback };
  const cause = fallback.detail ? `${fallback.detail} (the package says: ${fallback.reason})` : fallback.reason;
  return {
    engine: unavailable(
      'uws',
      new Error(
        `AGENTD_ENGINE=uws, but uWebSockets.js cannot load on Node ${process.version} (${process.platform}-${process.arch}): ${cause}`,
      ),
    ),
  };
}
