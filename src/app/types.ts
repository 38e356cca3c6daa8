/** What `createApp` is given and returns. */
import type { A2aPush } from '../a2a-face/push/index.ts';
import type { AgentCommands, AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Clock, IdSource } from '../clock.ts';
import type { Redactor } from '../config/redact.ts';
import type { EngineName, EngineSelection } from '../http/engine/index.ts';
import type { Limits } from '../http/limits.ts';
import type { FrontEnd } from '../http/server.ts';
import type { InspectHub } from '../inspect/index.ts';
import type { LlmClient } from '../llm/types.ts';
import type { Logger } from '../log/index.ts';
import type { ServerFace } from '../mcp-face/index.ts';
import type { McpCommands, McpEvents } from '../tools/index.ts';
import type { SpanExporter } from '../tracing/index.ts';
import type { WebhookCommands } from '../webhooks/index.ts';

/** The application's bus: every component's commands and events, composed here and nowhere else. */
export type AppCommands = McpCommands & AgentCommands & WebhookCommands;
export type AppEvents = McpEvents & AgentEvents;
export type AppBus = Bus<AppCommands, AppEvents>;

export interface AppDeps {
  log: Logger;
  /** The one redaction of outputs (default: built from `config`); the process entry shares it with its logger. */
  redactor?: Redactor;
  clock?: Clock;
  ids?: IdSource;
  /** Environment for provider key lookup (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Turns tracing on with this exporter (tests: an in-memory one). */
  spanExporter?: SpanExporter;
  /** Replaces the model client built from `config.llm` (tests, benchmarks). */
  llm?: LlmClient;
  /** `web` (default): REST, WebSocket and /mcp; `mcp`: REST and /mcp only. */
  mode?: 'web' | 'mcp';
  /** Replaces the front end's limiters built from `config.server.limits` (tests, benchmarks). */
  limits?: Limits;
  /** The HTTP/WebSocket engine (default: `selectEngine(env.AGENTD_ENGINE)`). */
  engine?: EngineSelection;
  /** The address the caller will listen on (the CLI's `--host` or `server.host`): a non-loopback one makes the service shared. */
  bindHost?: string | undefined;
  /** The id agentd's own /mcp declares, to tell a connection to itself (default: this instance's; one supervisor's workers share one). */
  serviceId?: string | undefined;
}

export interface App {
  bus: AppBus;
  frontEnd: FrontEnd;
  /** The engine serving HTTP and WebSockets. */
  engine: EngineName;
  /** The agent as an MCP server (also served on stdio by `--mcp-transport stdio`). */
  serverFace: ServerFace;
  /** The inspection hub, when `server.inspect` is on. */
  inspect: InspectHub | undefined;
  /** A2A push notifications: tasks' configs, and their deliveries in the durable outbox (src/a2a-face/push). */
  a2aPush: A2aPush;
  /** Checks the store's medium before listening and ends tool servers a crashed run left; rejects with the problem. */
  open(): Promise<void>;
  /** Kills every tool-server process group at once (for exits that cannot wait for `stop()`). */
  killChildren(): void;
  /** Connects start-up MCP servers (in parallel) and readies the agent; never rejects for one bad server. */
  start(): Promise<void>;
  /** Stops accepting, closes sockets, cancels turns, stops tool servers, flushes the store. */
  stop(): Promise<void>;
}
