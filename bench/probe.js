// @ts-check
/**
 * Benchmark probe, preloaded with `node --import ./bench/probe.js` into an agentd started with an
 * IPC channel (bench/lib/procs.ts). Plain JavaScript so that it adds nothing to a compiled service
 * (no tsx loader): it loads what it needs from the tree the process runs, dist/src/*.js when the
 * main script is compiled JavaScript, src/*.ts when it is TypeScript under `--import tsx` (which
 * then comes first on the command line). agentd publishes its app on the diagnostics channel
 * APP_CHANNEL (src/cli/serve.ts; free when nobody subscribes). The probe answers `{ id, op }`
 * messages so the load generator can look inside the service without an HTTP route: `stats` (after
 * a full GC when the process runs with --expose-gc) returns memory, bus listener counts and open
 * handles; `clock` returns process.hrtime in µs (the clock of --cpu-prof sample timestamps);
 * `snapshot` writes a heap snapshot to `path` after a full GC.
 */
import { subscribe } from 'node:diagnostics_channel';
import { existsSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** @import { App, AppEvents } from '../src/app.ts' */
/** @import { ProbeReply } from './probe-types.ts' */

const root = resolve(import.meta.dirname, '..');
const typescript = /\.[cm]?tsx?$/.test(process.argv[1] ?? '');
const tree = typescript ? join(root, 'src') : join(root, 'dist/src');
const ext = typescript ? '.ts' : '.js';
if (!typescript && !existsSync(join(tree, `cli${ext}`))) {
  throw new Error(`bench probe: ${join(tree, `cli${ext}`)} is missing: run npm run build first`);
}

/**
 * A module of the running tree, e.g. `cli/args` → dist/src/cli/args.js or src/cli/args.ts.
 * @param {string} name
 * @returns {Promise<Record<string, unknown>>}
 */
const load = (name) => import(pathToFileURL(join(tree, `${name}${ext}`)).href);

const APP_CHANNEL = /** @type {string} */ ((await load('cli/args')).APP_CHANNEL);
/** Before the bus addressed sessions, listeners were counted by frame name (a base revision's tree). */
const EVENT_FRAMES = /** @type {Record<string, string> | undefined} */ ((await load('http/frames')).EVENT_FRAMES);

/** @param {App} app */
function attach(app) {
  if (!process.send) return;
  process.channel?.unref();
  /** @param {string[]} names */
  const counts = (names) =>
    Object.fromEntries(names.map((n) => [n, app.bus.listenerCount(/** @type {keyof AppEvents} */ (n))]));
  process.on('message', (/** @type {{ id: number, op: string, path?: string }} */ msg) => {
    /** @param {ProbeReply} body */
    const reply = (body) => process.send?.(body);
    if (msg.op === 'clock') return reply({ id: msg.id, us: Number(process.hrtime.bigint() / 1000n) });
    const gc = /** @type {{ gc?: () => void }} */ (globalThis).gc;
    gc?.();
    if (msg.op === 'snapshot') return reply({ id: msg.id, path: writeHeapSnapshot(msg.path) });
    /** @type {Record<string, number>} */
    const handles = {};
    for (const type of process.getActiveResourcesInfo()) handles[type] = (handles[type] ?? 0) + 1;
    reply({
      id: msg.id,
      gc: gc !== undefined,
      memory: process.memoryUsage(),
      listeners: EVENT_FRAMES ? counts(Object.keys(EVENT_FRAMES)) : { all: app.bus.listenerCount() },
      handles,
    });
  });
}

subscribe(APP_CHANNEL, (app) => attach(/** @type {App} */ (app)));
