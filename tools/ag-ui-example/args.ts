/**
 * Flags and environment of the AG-UI example's launcher → the three ports. A flag wins over its
 * environment variable; 0, or neither given, means a free port. Throws LauncherArgsError.
 */
import { parseArgs } from 'node:util';

export const USAGE = `usage: npm run example:ag-ui [-- flags]     (or npm start in examples/ag-ui-copilotkit)
Starts the model simulator, agentd with examples/ag-ui-copilotkit/agent.yml and the example page
(Vite), all on 127.0.0.1, prints the page's address, and stops all three on Ctrl-C or when one ends.
  --page-port N        the page (env PAGE_PORT; default: a free port)
  --agentd-port N      agentd (env AGENTD_PORT; default: a free port)
  --simulator-port N   the model simulator (env SIMULATOR_PORT; default: a free port)
  -h, --help           show this help`;

/** Each port, 0 for a free one. */
export interface Ports {
  page: number;
  agentd: number;
  simulator: number;
}

export class LauncherArgsError extends Error {
  override name = 'LauncherArgsError';
}

/** Each port's flag and environment variable. */
const SOURCES = {
  page: { flag: 'page-port', variable: 'PAGE_PORT' },
  agentd: { flag: 'agentd-port', variable: 'AGENTD_PORT' },
  simulator: { flag: 'simulator-port', variable: 'SIMULATOR_PORT' },
} as const;

function port(text: string | undefined, source: string): number {
  if (text === undefined || text === '') return 0;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65_535)
    throw new LauncherArgsError(`${source} must be a port (0-65535), got "${text}"`);
  return n;
}

const OPTIONS = {
  'page-port': { type: 'string' },
  'agentd-port': { type: 'string' },
  'simulator-port': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** argv (without node and the script) and the environment → the ports, or `help`. */
export function parseLauncherArgs(argv: string[], env: NodeJS.ProcessEnv): { ports: Ports; help: boolean } {
  const values = flags(argv);
  const pick = ({ flag, variable }: (typeof SOURCES)[keyof Ports]): number =>
    values[flag] !== undefined ? port(values[flag], `--${flag}`) : port(env[variable], variable);
  return {
    ports: { page: pick(SOURCES.page), agentd: pick(SOURCES.agentd), simulator: pick(SOURCES.simulator) },
    help: values.help ?? false,
  };
}

function flags(argv: string[]) {
  try {
    return parseArgs({ args: argv, strict: true, options: OPTIONS }).values;
  } catch (e) {
    throw new LauncherArgsError(e instanceof Error ? e.message : String(e));
  }
}
