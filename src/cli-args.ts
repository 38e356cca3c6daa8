import { parseArgs } from 'node:util';
import { LOG_LEVELS } from './log/index.ts';

export const USAGE = `Usage: agentd [options]

Hosts one conversational AI agent: REST under /api, WebSocket at /, MCP at /mcp.

Options:
  --mode <web|mcp>         web: REST + WebSocket + /mcp; mcp: API only (default: web)
  --mcp-transport <t>      http: serve over HTTP (default); stdio: speak MCP on
                           stdin/stdout for desktop MCP clients (no HTTP; logs on stderr)
  --web-port <port>        HTTP port (default: server.port of the config, else 3001)
  --host <address>         bind address (default: server.host of the config, else 127.0.0.1)
  --workers <n>            serve the port from n processes sharing sessions through Redis
                           (storage.type redis; default: 1, one process)
  --agent <file>           agent config YAML (default: agents/default.yml)
  --inspect                serve the live state-machine inspector at /inspect/ws (server.inspect)
  --inspect-content        inspection frames include prompt, reply and tool text (server.inspectContent)
  --inspect-relay <url>    also push the inspection stream to an inspector server at ws://... (server.inspectRelay)
  --log-level <level>      ${LOG_LEVELS.join('|')} (default: info)
  -h, --help               show this help
  -v, --version            print the version
`;

export interface CliOptions {
  mode: 'web' | 'mcp';
  mcpTransport: 'http' | 'stdio';
  port: number | undefined;
  host: string | undefined;
  agent: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Turn the inspector on (and with content), whatever the config says. */
  inspect: boolean;
  inspectContent: boolean;
  inspectRelay: string | undefined;
  /** Processes serving the port (1: this one). */
  workers: number;
  help: boolean;
  version: boolean;
}

export class UsageError extends Error {}

/** argv → options. Throws UsageError for unknown flags or bad values. */
export function parseCliArgs(argv: string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        mode: { type: 'string' },
        'mcp-transport': { type: 'string' },
        'web-port': { type: 'string' },
        host: { type: 'string' },
        agent: { type: 'string' },
        'log-level': { type: 'string' },
        inspect: { type: 'boolean' },
        'inspect-content': { type: 'boolean' },
        'inspect-relay': { type: 'string' },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const mode = values.mode ?? 'web';
  if (mode !== 'web' && mode !== 'mcp') throw new UsageError(`--mode must be web or mcp, got "${mode}"`);
  const mcpTransport = values['mcp-transport'] ?? 'http';
  if (mcpTransport !== 'http' && mcpTransport !== 'stdio') throw new UsageError(`--mcp-transport must be http or stdio, got "${mcpTransport}"`);
  let port: number | undefined;
  if (values['web-port'] !== undefined) {
    port = Number(values['web-port']);
    if (!/^\d+$/.test(values['web-port']) || port > 65_535) throw new UsageError(`--web-port must be a port number (0-65535), got "${values['web-port']}"`);
  }
  const logLevel = values['log-level'] ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  if (values['inspect-relay'] !== undefined && !/^wss?:\/\/[^/]/.test(values['inspect-relay'])) throw new UsageError(`--inspect-relay must be a ws:// or wss:// URL, got "${values['inspect-relay']}"`);
  if (values.host === '') throw new UsageError('--host must not be empty');
  const workers = Number(values.workers ?? '1');
  if (!/^\d+$/.test(values.workers ?? '1') || workers < 1 || workers > 64) throw new UsageError(`--workers must be a number of processes (1-64), got "${values.workers}"`);
  if (workers > 1 && mcpTransport === 'stdio') throw new UsageError('--workers serves HTTP; it cannot be used with --mcp-transport stdio');
  return {
    mode: mcpTransport === 'stdio' ? 'mcp' : mode,
    mcpTransport,
    port,
    host: values.host,
    agent: values.agent ?? 'agents/default.yml',
    logLevel: logLevel as CliOptions['logLevel'],
    inspect: (values.inspect ?? false) || (values['inspect-content'] ?? false) || values['inspect-relay'] !== undefined,
    inspectContent: values['inspect-content'] ?? false,
    inspectRelay: values['inspect-relay'],
    workers,
    help: values.help ?? false,
    version: values.version ?? false,
  };
}

/** The diagnostics channel on which the process entry publishes its app (for preloaded tools). */
export const APP_CHANNEL = 'agentd:app';
