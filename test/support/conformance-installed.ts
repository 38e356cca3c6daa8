import { existsSync } from 'node:fs';
import { CONFORMANCE_VAR } from './conformance-setup.ts';
import { until } from './wait.ts';

/**
 * How long a first run's install of the MCP conformance suite may take (npm ci from the registry on a loaded
 * machine): the budget of a hook that waits for it.
 */
export const CONFORMANCE_INSTALL_MS = 600_000;

/**
 * Resolves once the run's install of the MCP conformance suite (test/support/conformance-setup.ts) has ended,
 * whatever its outcome: a test then finds the suite installed or says how to install it.
 */
export async function conformanceInstalled(): Promise<void> {
  const status = process.env[CONFORMANCE_VAR];
  if (!status) return; // not under vitest's config: the suite is as the checkout has it
  await until(() => existsSync(status), 'the MCP conformance suite installed (npm run conformance:install)', {
    timeout: CONFORMANCE_INSTALL_MS,
    interval: 200,
  });
}
