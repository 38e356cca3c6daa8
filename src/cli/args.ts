/** argv → what the `agentd` command is asked to do; imports nothing heavy. */
import { parseArgs } from 'node:util';
import { nearMiss } from '../config/near-miss.ts';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log/levels.ts';

/** The agent file used when `--agent` is not given (what `agentd init` writes). */
export const DEFAULT_AGENT_FILE = 'agent.yml';

export const USAGE = `Usage: agentd [options]              serve the agent (REST /api, WebSocket /, MCP /mcp)
       agentd init [FILE] [options]       write a commented agent file (default: ${DEFAULT_AGENT_FILE})
       agentd demo                        run the offline demo (model simulator + demo agent)

Hosts one conversational AI agent over HTTP, WebSocket and MCP.

Options:
  --agent <file>           agent file (YAML; default: ./${DEFAULT_AGENT_FILE})
  --mode <web|mcp>         web: REST + WebSocket + /mcp; mcp: API only (default: web)
  --mcp-transport <t>      http: serve over HTTP (default); stdio: speak MCP on
                           stdin/stdout for desktop MCP clients (no HTTP; logs on stderr)
  --web-port <port>        HTTP port (default: server.port of the config, else 3001)
  --host <address>         bind address (default: server.host of the config, else 127.0.0.1)
  --workers <n>            serve the port from n processes sharing sessions through Redis
                           (storage.type redis; default: 1, one process)
  --inspect                serve the live state-machine inspector at /inspect/ws (server.inspect)
  --inspect-content        inspection frames include prompt, reply and tool text (server.inspectContent)
  --inspect-relay <url>    also push the inspection stream to an inspector server at ws://... (server.inspectRelay)
  --log-level <level>      ${LOG_LEVELS.join('|')} (default: info)
  --log-format <format>    pretty: readable lines; json: JSON lines (default: pretty on a
                           terminal, else json)
  -h, --help               show this help
  -v, --version            print the version

agentd init options:
  --provider <name>        the model provider (default: openai; e.g. ollama, vllm, openrouter, groq)
  --model <name>           the model (default: the provider's usual small model)
  --force                  overwrite FILE if it exists

Environment: AGENTD_ENGINE=auto|uws|node picks the HTTP engine (default auto: uWebSockets.js
when its native build loads on this system, else Node's own sockets).
`;

export interface ServeOptions {
  command: 'serve';
  mode: 'web' | 'mcp';
  mcpTransport: 'http' | 'stdio';
  port: number | undefined;
  host: string | undefined;
  /** The agent file; undefined when `--agent` was not given (then ./agent.yml, if it exists). */
  agent: string | undefined;
  logLevel: LogLevel;
  /** Undefined: pretty on a terminal, else json (src/log/destination.ts). */
  logFormat: LogFormat | undefined;
  /** Turn the inspector on (and with content), whatever the config says. */
  inspect: boolean;
  inspectContent: boolean;
  inspectRelay: string | undefined;
  /** Processes serving the port (1: this one). */
  workers: number;
}

export interface InitOptions {
  command: 'init';
  file: string;
  provider: string | undefined;
  model: string | undefined;
  force: boolean;
}

export type CliOptions = ServeOptions | InitOptions | { command: 'demo' | 'help' | 'version' };

export class UsageError extends Error {}

const FLAGS = {
  mode: { type: 'string' },
  'mcp-transport': { type: 'string' },
  'web-port': { type: 'string' },
  host: { type: 'string' },
  agent: { type: 'string' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
  inspect: { type: 'boolean' },
  'inspect-content': { type: 'boolean' },
  'inspect-relay': { type: 'string' },
  workers: { type: 'string' },
  provider: { type: 'string' },
  model: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: true }>>['values'];

/** argv → options. Throws UsageError for unknown commands or flags, bad values, and flags of another command. */
export function parseCliArgs(argv: string[]): CliOptions {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, strict: true, allowPositionals: true, options: FLAGS });
  } catch (e) {
    throw new UsageError(parseFailure(e as Error & { code?: string }));
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  if (values.version) return { command: 'version' };
  const [command, ...rest] = positionals;
  const initFlags = (['provider', 'model', 'force'] as const).filter((f) => values[f] !== undefined);
  if (command === 'init') {
    const serveFlags = Object.keys(values).filter((f) => !['provider', 'model', 'force'].includes(f));
    if (serveFlags.length > 0)
      throw new UsageError(`agentd init takes --provider, --model and --force, not --${serveFlags[0]}`);
    if (rest.length > 1) throw new UsageError(`agentd init takes one FILE, got ${rest.join(' ')}`);
    return {
      command: 'init',
      file: rest[0] ?? DEFAULT_AGENT_FILE,
      provider: values.provider,
      model: values.model,
      force: values.force ?? false,
    };
  }
  if (initFlags.length > 0) throw new UsageError(`--${initFlags[0]} belongs to agentd init`);
  if (command === 'demo') {
    if (rest.length > 0 || Object.keys(values).length > 0)
      throw new UsageError('agentd demo takes no arguments (its environment variables are in docs/getting-started.md)');
    return { command: 'demo' };
  }
  if (command !== undefined)
    throw new UsageError(`unknown command "${positionals.join(' ')}" (commands: init, demo; or none to serve)`);
  return serveOptions(values);
}

/** node:util's parse error in our words: an unknown option with the near miss it probably meant. */
function parseFailure(e: Error & { code?: string }): string {
  const unknown = /^Unknown option '(-{1,2})([^'=]+)/.exec(e.message);
  if (e.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || !unknown) return e.message;
  const [, dashes, name] = unknown;
  const meant = nearMiss(name!, Object.keys(FLAGS));
  return `unknown option ${dashes}${name}${meant ? `; did you mean --${meant}?` : ' (agentd --help lists them)'}`;
}

function serveOptions(values: Values): ServeOptions {
  const mode = values.mode ?? 'web';
  if (mode !== 'web' && mode !== 'mcp') throw new UsageError(`--mode must be web or mcp, got "${mode}"`);
  const mcpTransport = values['mcp-transport'] ?? 'http';
  if (mcpTransport !== 'http' && mcpTransport !== 'stdio')
    throw new UsageError(`--mcp-transport must be http or stdio, got "${mcpTransport}"`);
  let port: number | undefined;
  if (values['web-port'] !== undefined) {
    port = Number(values['web-port']);
    if (!/^\d+$/.test(values['web-port']) || port > 65_535)
      throw new UsageError(`--web-port must be a port number (0-65535), got "${values['web-port']}"`);
  }
  const logLevel = values['log-level'] ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const logFormat = values['log-format'];
  if (logFormat !== undefined && !(LOG_FORMATS as readonly string[]).includes(logFormat))
    throw new UsageError(`--log-format must be pretty or json, got "${logFormat}"`);
  if (values['inspect-relay'] !== undefined && !/^wss?:\/\/[^/]/.test(values['inspect-relay']))
    throw new UsageError(`--inspect-relay must be a ws:// or wss:// URL, got "${values['inspect-relay']}"`);
  if (values.host === '') throw new UsageError('--host must not be empty');
  if (values.agent === '') throw new UsageError('--agent must not be empty');
  const workers = Number(values.workers ?? '1');
  if (!/^\d+$/.test(values.workers ?? '1') || workers < 1 || workers > 64)
    throw new UsageError(`--workers must be a number of processes (1-64), got "${values.workers}"`);
  if (workers > 1 && mcpTransport === 'stdio')
    throw new UsageError('--workers serves HTTP; it cannot be used with --mcp-transport stdio');
  return {
    command: 'serve',
    mode: mcpTransport === 'stdio' ? 'mcp' : mode,
    mcpTransport,
    port,
    host: values.host,
    agent: values.agent,
    logLevel: logLevel as LogLevel,
    logFormat: logFormat as LogFormat | undefined,
    inspect: (values.inspect ?? false) || (values['inspect-content'] ?? false) || values['inspect-relay'] !== undefined,
    inspectContent: values['inspect-content'] ?? false,
    inspectRelay: values['inspect-relay'],
    workers,
  };
}

/** The diagnostics channel on which the process entry publishes its app (for preloaded tools). */
export const APP_CHANNEL = 'agentd:app';
