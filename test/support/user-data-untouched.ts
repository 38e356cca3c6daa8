/**
 * Global setup: tests never write into the real user's data folder. agentd keeps the sessions of an agent file that
 * names no storage folder in the per-user data folder (`$XDG_DATA_HOME/agentd`, else `~/.local/share/agentd`, …;
 * src/config/storage-dir.ts). For the run, XDG_DATA_HOME names a temporary folder: the workers inherit it, and children
 * spawned with an environment of their own get it through `testRunEnv` (runAgentd gives each start a fresh one). A
 * folder of agentd's that appears in the user's real data folder during the run fails the run, naming it.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { userDataDir } from '../../src/config/storage-dir.ts';
import { firstInRun } from './first-in-run.ts';

const entries = (dir: string): Set<string> => {
  try {
    return new Set(readdirSync(dir));
  } catch {
    return new Set();
  }
};

export function setup(): (() => Promise<void>) | undefined {
  if (!firstInRun('user-data-untouched')) return undefined;
  const real = userDataDir(); // the user's, read before the run's replaces it
  const before = entries(real);
  const runs = mkdtempSync(join(tmpdir(), 'agentd-user-data-'));
  process.env.XDG_DATA_HOME = runs;
  return async () => {
    await rm(runs, { recursive: true, force: true });
    const added = [...entries(real)].filter((name) => !before.has(name));
    if (added.length === 0) return;
    process.exitCode = 1; // a throwing teardown is reported by vitest but does not fail the run
    console.error(
      `\nnpm test wrote ${added.map((name) => join(real, name)).join(', ')} in the user's data folder (agentd's ` +
        'default storage folder): spawn agentd with testRunEnv() in its environment, or give it a storage folder',
    );
  };
}
