/**
 * Global setup: tests write only under their own temporary folders, never into the checkout. The checkout's `data/`
 * is what agentd wrote by default before the per-user data folder (`storage.dir` ./data/sessions, from the working
 * folder; `agentd init` writes it beside the file): one made during the run means a test started agentd over the
 * checkout, where every such test would share one folder, which one agentd holds at a time. The run then fails naming
 * it (a `data/` that was there before, a developer's own, is left alone). user-data-untouched.ts guards the rest.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { firstInRun } from './first-in-run.ts';
import { ROOT } from './paths.ts';

export function setup(): (() => void) | undefined {
  const data = join(ROOT, 'data');
  if (existsSync(data) || !firstInRun('checkout-untouched')) return undefined;
  return () => {
    if (!existsSync(data)) return;
    process.exitCode = 1; // a throwing teardown is reported by vitest but does not fail the run
    console.error(
      `\nnpm test wrote ${data} (agentd's default storage folder, from its working folder): start agentd in a ` +
        'temporary folder (runAgentd does) or give it a storage folder of its own',
    );
  };
}
