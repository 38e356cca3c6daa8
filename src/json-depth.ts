/** Nesting allowed in JSON that untrusted peers send (request bodies, frames, tool arguments). */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests objects or arrays deeper than `max` levels (a scalar is depth 0). Walks
 * iteratively and stops at the first level past `max`, so a hostile document cannot overflow the
 * stack here or in any recursive code that would see it later.
 */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const v of level) {
      if (typeof v !== 'object' || v === null) continue;
      if (depth >= max) return true;
      for (const child of Array.isArray(v) ? v : Object.values(v)) next.push(child);
    }
    level = next;
  }
  return false;
}
