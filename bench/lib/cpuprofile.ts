/**
 * Attributes a V8 `.cpuprofile` (from `node --cpu-prof`) by owner: every sample's time goes to
 * the nearest frame on its stack that belongs to an owner (the openai SDK, fetch/undici, our
 * src/ or machines/, a dependency); node's own JS and native functions (JSON.stringify, uWS's
 * C++ methods) are charged to the code that called them. Samples are kept only inside windows
 * of the service's monotonic clock (µs), so start-up and shutdown do not count.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const sourceMaps = new Map<string, SourceMap | undefined>();
/**
 * The module a frame's code was compiled from: the compiled service's entries are bundles (tools/build.mjs), whose
 * source maps name the per-module file each function came from; any other frame is its own file.
 */
function moduleOf(frame: ProfileNode['callFrame']): string {
  if (!frame.url.startsWith('file:') || !frame.url.includes('/dist/')) return frame.url;
  if (!sourceMaps.has(frame.url)) {
    const map = `${fileURLToPath(frame.url)}.map`;
    sourceMaps.set(frame.url, existsSync(map) ? new SourceMap(JSON.parse(readFileSync(map, 'utf8'))) : undefined);
  }
  const entry = sourceMaps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
  return entry && 'originalSource' in entry ? new URL(entry.originalSource, frame.url).href : frame.url;
}

/** Owner of a frame's code, or undefined for node internals and natives (charged to the caller). */
export function ownerOf(url: string, fn: string): string | undefined {
  if (fn === '(garbage collector)') return 'runtime: GC';
  if (fn === '(program)') return 'runtime: native, unattributed';
  if (fn === '(idle)') return 'idle';
  if (url.includes('/node_modules/openai/')) return 'model client: openai SDK';
  if (url.includes('internal/deps/undici') || url.includes('internal/webstreams'))
    return 'model client: fetch (undici, web streams)';
  const dep = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dep?.[1]) return `agentd dependency: ${dep[1]}`;
  if (/\/(src|machines)\//.test(url) && !url.startsWith('node:')) {
    const file = /\/((?:src|machines)\/[^?]+)/.exec(url)?.[1] ?? url;
    // A compiled service runs dist/src/x.js: named by its source, as under tsx.
    return `agentd: ${url.includes('/dist/') ? file.replace(/\.js$/, '.ts') : file}`;
  }
  return undefined;
}

/**
 * Owner of a stack with no owned frame. A stack through node's HTTP server is the node engine's
 * (agentd). Otherwise node's Readable async iterator is how undici's fetch reads a response body
 * (nothing else in the streaming path reads a node Readable under uWebSockets.js), so those samples
 * are charged to the model client, marked as inferred (under the node engine they include its
 * socket writes' completions, so the model client's share is an upper bound there).
 */
function ownerlessOwner(leaf: ProfileNode | undefined, stackUrls: string[]): string {
  // The node engine (AGENTD_ENGINE=node) reads requests through node's HTTP server, whose stacks also hold node streams.
  if (stackUrls.some((u) => u === 'node:_http_server')) return 'agentd dependency: node:http server';
  if (stackUrls.some((u) => u.includes('internal/streams/')))
    return 'model client: node streams under fetch (inferred)';
  if (leaf?.callFrame.functionName === 'runMicrotasks') return 'runtime: microtask queue';
  return 'runtime: node core, no app caller';
}
export interface ProfileSplit {
  /** Sampled non-idle time in the window (ms). */
  busyMs: number;
  /** From the first to the last sample kept (ms). */
  windowMs: number;
  /** ms by owner, largest first. */
  byOwner: [string, number][];
  /** ms by group: `model client`, `agentd` (src/, machines/ and the dependencies they call), `runtime` (GC, microtasks, unattributed natives). */
  byGroup: Record<Group, number>;
}

export const GROUPS = ['model client', 'agentd', 'runtime'] as const;
export type Group = (typeof GROUPS)[number];

const groupOf = (owner: string): Group =>
  owner.startsWith('model client') ? 'model client' : owner.startsWith('agentd') ? 'agentd' : 'runtime';

/** Splits the samples inside `windows` ([fromUs, toUs] of the service's monotonic clock; default: all). */
export function splitProfile(file: string, windows: [number, number][] = [[-Infinity, Infinity]]): ProfileSplit {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const ownerCache = new Map<number, string>();
  const ownerFor = (id: number): string => {
    const cached = ownerCache.get(id);
    if (cached !== undefined) return cached;
    let owner: string | undefined;
    const urls: string[] = [];
    for (let cur: number | undefined = id; cur !== undefined && owner === undefined; cur = parent.get(cur)) {
      const node = byId.get(cur);
      if (node) {
        owner = ownerOf(moduleOf(node.callFrame), node.callFrame.functionName);
        urls.push(node.callFrame.url);
      }
    }
    owner ??= ownerlessOwner(byId.get(id), urls);
    ownerCache.set(id, owner);
    return owner;
  };
  const totals = new Map<string, number>();
  let t = profile.startTime;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (!windows.some(([from, to]) => t >= from && t <= to)) continue;
    first = Math.min(first, t);
    last = Math.max(last, t);
    const owner = ownerFor(profile.samples[i]!);
    totals.set(owner, (totals.get(owner) ?? 0) + dt);
  }
  totals.delete('idle');
  const byOwner = [...totals].map(([k, us]): [string, number] => [k, us / 1000]).sort((a, b) => b[1] - a[1]);
  const byGroup = Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
  for (const [owner, ms] of byOwner) byGroup[groupOf(owner)] += ms;
  const busyMs = byOwner.reduce((s, [, ms]) => s + ms, 0);
  return { busyMs, windowMs: (last - first) / 1000, byOwner, byGroup };
}

/** The main thread's profile in a --cpu-prof directory (`CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0). */
export function mainThreadProfile(dir: string): string {
  const files = readdirSync(dir).filter((f) => /\.0\.\d+\.cpuprofile$/.test(f));
  if (files.length === 0) throw new Error(`no main-thread .cpuprofile in ${dir}`);
  return join(dir, files.sort().at(-1)!);
}
