/**
 * Model-visible tool names (ARCHITECTURE.md §3). `assignModelNames` is deterministic, in input order: every name
 * matches MODEL_TOOL_NAME and all are distinct; a tool keeps its own name when valid and no other server offers the
 * same (sanitized) name; colliding names are all qualified `server--tool`; invalid characters become `_`; a name over
 * 64 characters keeps a prefix plus a short hash of `server/tool`, so truncation never merges two tools.
 */
import { createHash } from 'node:crypto';

export const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;
const SEPARATOR = '--';

export interface ToolRef {
  serverId: string;
  toolName: string;
}

/** The `server--tool` form (before sanitizing). */
export const qualifiedName = (serverId: string, toolName: string) => `${serverId}${SEPARATOR}${toolName}`;

const sanitize = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';

const hash = (ref: ToolRef, salt = '') =>
  createHash('sha256').update(`${ref.serverId}\u0000${ref.toolName}\u0000${salt}`).digest('hex').slice(0, 8);

/** Fits a sanitized name into 64 characters, keeping it unique per `ref`. */
function fit(name: string, ref: ToolRef, salt = ''): string {
  if (name.length <= MAX && salt === '') return name;
  const suffix = `_${hash(ref, salt)}`;
  return name.slice(0, MAX - suffix.length) + suffix;
}

export function assignModelNames(refs: readonly ToolRef[]): string[] {
  const plain = refs.map((r) => sanitize(r.toolName));
  const serversByName = new Map<string, Set<string>>();
  plain.forEach((name, i) => {
    const servers = serversByName.get(name) ?? new Set<string>();
    servers.add(refs[i]!.serverId);
    serversByName.set(name, servers);
  });

  const candidates = refs.map((ref, i) => {
    const name = plain[i]!;
    const shared = (serversByName.get(name)?.size ?? 0) > 1;
    return fit(shared ? `${sanitize(ref.serverId)}${SEPARATOR}${name}` : name, ref);
  });

  // Whatever still collides (sanitizing `a.b` and `a_b` alike, a server called `x--y`): names that are exactly
  // what the server said claim first; the others get a hash suffix.
  const counts = new Map<string, number>();
  for (const c of candidates) counts.set(c, (counts.get(c) ?? 0) + 1);
  const pristine = (i: number) =>
    candidates[i] === refs[i]!.toolName || candidates[i] === qualifiedName(refs[i]!.serverId, refs[i]!.toolName);
  const taken = new Set<string>();
  const out: (string | undefined)[] = refs.map(() => undefined);
  candidates.forEach((name, i) => {
    if (pristine(i) && !taken.has(name)) {
      taken.add(name);
      out[i] = name;
    }
  });
  candidates.forEach((candidate, i) => {
    if (out[i] !== undefined) return;
    let name = candidate;
    let salt = 0;
    while (taken.has(name) || (name === candidate && (counts.get(candidate) ?? 0) > 1))
      name = fit(candidate, refs[i]!, String(salt++));
    taken.add(name);
    out[i] = name;
  });
  return out as string[];
}

/** Names of a client's tools beside `taken` (which keep theirs): its own name when free, else `client--<name>`, unique. */
const CLIENT_PREFIX = 'client';
export function clientToolNames(taken: ReadonlySet<string>, names: readonly string[]): string[] {
  const used = new Set(taken);
  return names.map((toolName) => {
    const ref = { serverId: CLIENT_PREFIX, toolName };
    let name = fit(sanitize(toolName), ref);
    if (used.has(name)) name = fit(`${CLIENT_PREFIX}${SEPARATOR}${sanitize(toolName)}`, ref);
    for (let salt = 0; used.has(name); salt++)
      name = fit(`${CLIENT_PREFIX}${SEPARATOR}${sanitize(toolName)}`, ref, String(salt));
    used.add(name);
    return name;
  });
}
