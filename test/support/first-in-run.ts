/**
 * vitest runs the config's global setups once for the root project and again for each project with files in the
 * run (`unit`, `int` and `slow` extend the root config), each time from a fresh copy of the setup module, in one process.
 * A setup that must happen once per run (one process ledger, one package folder) asks here first.
 */
export function firstInRun(name: string): boolean {
  const key = Symbol.for(`agentd.test.${name}`);
  const shared = globalThis as Record<symbol, unknown>;
  if (shared[key]) return false;
  shared[key] = true;
  return true;
}
