import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { AnyActorRef } from 'xstate';
import { parseSessionEvent } from './conversation/session-events.ts';
import {
  createAgentService,
  createTurnFollower,
  createTurnWaiter,
  createUnnamedExpiry,
  SESSION_COMMANDS,
  TAKE_OVER_COMMAND,
  type AgentCommands,
  type AgentEvents,
} from './agent/index.ts';
import { createBus, type Bus } from './bus/index.ts';
import { createInspectHub, startRelay, type InspectHub } from './inspect/index.ts';
import { createIdSource, systemClock, type Clock, type IdSource } from './clock.ts';
import { createRedactor, type Redactor } from './config/redact.ts';
import { limitsStoreOf, type AgentConfig } from './config/schema.ts';
import { isShared } from './config/shared.ts';
import { createRoutes } from './http/routes/index.ts';
import { createMetrics } from './metrics/index.ts';
import { timedAppends } from './store/index.ts';
import { selectEngine, type EngineSelection } from './http/engine/index.ts';
import { createFrontEnd, type FrontEnd } from './http/server.ts';
import { createLlmClient, type RequestOutcome } from './llm/index.ts';
import { createTracing, tracingWanted, type SpanExporter } from './tracing/index.ts';
import { createLimits, type Limits } from './http/limits.ts';
import type { LlmClient } from './llm/types.ts';
import type { Logger } from './log/index.ts';
import {
  createChildRegistry,
  createMcpService,
  reapLeftovers,
  runtimePolicyOf,
  type McpCommands,
  type McpEvents,
} from './tools/index.ts';
import { createHttpFace, createServerFace, type ServerFace } from './mcp-face/index.ts';
import { createCluster } from './cluster/index.ts';
import { createStore } from './store/index.ts';
import { createSecretStore, sharedSecret } from './store/secret-store.ts';
import { madeOnce } from './made-once.ts';
import { VERSION } from './package-info.ts';

/** The application's bus: every component's commands and events, composed here and nowhere else. */
export type AppCommands = McpCommands & AgentCommands;
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
  /**
   * The agent file's folder: on a shared service, runtime-connected interpreters run only scripts under it (or
   * `node_modules`). Default: the working directory (a config built in code has no file).
   */
  agentDir?: string | undefined;
  /**
   * The id agentd's own /mcp declares, so that connecting agentd to itself is told apart
   * (src/tools/mcp/self-connection.ts). Default: this instance's; the workers of one supervisor share one.
   */
  serviceId?: string | undefined;
}

export interface App {
  bus: AppBus;
  frontEnd: FrontEnd;
  /** The agent as an MCP server (also served on stdio by `--mcp-transport stdio`). */
  serverFace: ServerFace;
  /** The inspection hub, when `server.inspect` is on. */
  inspect: InspectHub | undefined;
  /** Checks what must work before the service listens (the store's medium) and ends tool servers a crashed run left; rejects with the problem. */
  open(): Promise<void>;
  /** Kills every tool-server process group at once (for exits that cannot wait for `stop()`). */
  killChildren(): void;
  /** Connects start-up MCP servers (in parallel) and readies the agent; never rejects for one bad server. */
  start(): Promise<void>;
  /** Stops accepting, closes sockets, cancels turns, stops tool servers, flushes the store. */
  stop(): Promise<void>;
}

const unknownStoreId = (): never => {
  throw new Error('unreachable: the store id is read before the front end listens');
};

/** Builds every component and wires them through one bus. Never listens: the caller does. */
export function createApp(config: AgentConfig, deps: AppDeps): App {
  const { log } = deps;
  const redactor = deps.redactor ?? createRedactor(config);
  const clock = deps.clock ?? systemClock;
  const ids = deps.ids ?? createIdSource();
  const bus = createBus<AppCommands, AppEvents>({ log: log.child({ component: 'bus' }), clock, ids });
  const metrics = createMetrics();
  const unwatchMetrics = metrics.watchBus(bus, clock);
  const store = timedAppends(
    createStore(config.storage, { log: log.child({ component: 'store' }), clock, parseEvent: parseSessionEvent }),
    metrics.append,
  );
  const env = deps.env ?? process.env;
  const tracing =
    deps.spanExporter || config.server.tracing || tracingWanted(env)
      ? createTracing(
          {
            agentName: config.name,
            provider: config.llm.provider,
            model: config.llm.model,
            ...(deps.spanExporter && { exporter: deps.spanExporter }),
          },
          env,
        )
      : undefined;
  const unwatchTraces = tracing?.watchBus(bus);
  const observe = (turnId: string | undefined) => {
    const endSpan = tracing?.modelRequest(turnId);
    return (outcome: RequestOutcome) => {
      metrics.modelRequest(outcome.ok, outcome.retries, outcome.usage);
      endSpan?.(outcome);
    };
  };
  const llm = deps.llm ?? createLlmClient(config.llm, { log: log.child({ component: 'llm' }), env, clock, observe });
  const instanceId = randomUUID();
  const serviceId = deps.serviceId ?? instanceId;
  // A shared service (keys, or a non-loopback bind) lets runtime connects start only what the operator allowed.
  const runtime = runtimePolicyOf(config, {
    shared: isShared(config, deps.bindHost),
    agentDir: deps.agentDir ?? process.cwd(),
  });
  // Tool-server process groups are recorded beside the session logs, so a crash leaves none behind for long.
  const childrenFile = config.storage.type === 'jsonl' ? join(config.storage.dir, '.agentd-children.json') : undefined;
  const children = createChildRegistry(childrenFile, log.child({ component: 'mcp' }));
  // The inspector watches the machines only while a viewer is attached (src/inspect/hub.ts).
  const inspect = config.server.inspect
    ? createInspectHub({ content: config.server.inspectContent, redact: redactor.deep })
    : undefined;
  const registerActor = inspect && { registerActor: (id: string, actor: AnyActorRef) => inspect.register(id, actor) };
  // Tool servers' logs reach the inspector as `@agentd.mcpServerLog` on their server's actor.
  if (inspect)
    bus.on('mcp.serverLog', ({ payload }) => inspect.notice(`mcp:${payload.serverId}`, 'mcpServerLog', payload));
  // With Redis storage, instances share sessions: each runs on its lease holder, and frames reach every instance.
  const cluster =
    config.storage.type === 'redis'
      ? createCluster({
          url: config.storage.url,
          keyPrefix: config.storage.keyPrefix,
          leaseMs: config.storage.leaseMs,
          instanceId,
          log: log.child({ component: 'cluster' }),
          clock,
          ids,
          bus,
          // The agent's session commands (the cluster does not import the agent).
          sessionCommands: { scoped: SESSION_COMMANDS, sendMessage: 'agent.sendMessage', takeOver: TAKE_OVER_COMMAND },
          sessions: { holds: (id) => agent.holds(id), drop: (id) => void agent.drop(id, 'moved') },
        })
      : undefined;
  const serviceBus = cluster ? cluster.route(bus) : bus;
  // OAuth registrations and tokens of tool servers live on the sessions' medium (a file per server, or Redis).
  const secrets = createSecretStore(config.storage, log.child({ component: 'secrets' }));
  let listening: { host: string; port: number } | undefined;
  const callbackUrl = () => {
    const host = listening && !['0.0.0.0', '::', ''].includes(listening.host) ? listening.host : '127.0.0.1';
    const shown = host.includes(':') ? `[${host}]` : host;
    return `http://${shown}${listening ? `:${listening.port}` : ''}/api/oauth/callback`;
  };
  const mcp = createMcpService({
    config,
    bus: serviceBus,
    log: log.child({ component: 'mcp' }),
    clock,
    instanceId,
    serviceId,
    clientInfo: { name: 'agentd', version: VERSION },
    runtime,
    children,
    redactor,
    secrets,
    callbackUrl,
    ...registerActor,
  });
  const agent = createAgentService({
    config,
    bus: serviceBus,
    store,
    llm,
    log: log.child({ component: 'agent' }),
    clock,
    ids,
    redact: redactor.deep,
    ...registerActor,
    ...(cluster && { orphanedTurnReason: 'owner_lost', onSessionClosed: cluster.sessionClosed }),
  });
  const unnamed = config.server.limits.unnamedSessions;
  const expiry = createUnnamedExpiry({ bus, store, clock, log: log.child({ component: 'agent' }), ...unnamed });
  // Every face follows a turn (its log, then live, on any instance) through this one port.
  const follower = createTurnFollower({ bus, store, interest: cluster?.interest });
  const waiter = createTurnWaiter(bus, config.server.requestTimeoutMs, follower);
  // /mcp's sealing key, one for every instance of the store and kept across restarts (a failed read is retried).
  const faceKey = madeOnce(() => sharedSecret(secrets, 'mcp-face-key'));
  const serverFace = createServerFace({
    bus,
    log: log.child({ component: 'mcp-face' }),
    ids,
    waiter,
    card: {
      name: config.name,
      version: config.version,
      model: llm.model,
      ...(config.description !== undefined && { description: config.description }),
    },
    exposeTools: config.server.mcp.exposeTools,
    maxHops: config.server.mcp.maxHops,
    key: faceKey,
    serviceId,
  });
  // Shared limits count in the sessions' Redis, on the cluster's connection.
  const sharedLimits =
    cluster && config.storage.type === 'redis' && limitsStoreOf(config) === 'redis'
      ? { client: cluster.redis, keyPrefix: config.storage.keyPrefix }
      : undefined;
  const limits = deps.limits ?? (sharedLimits && createLimits(config.server.limits, clock, sharedLimits));
  let ready = false;
  // The store's identity, read before the service opens or listens: every WebSocket's first frame carries it.
  let storeId: string | undefined;
  const identify = async () => void (storeId ??= await store.storeId());
  let relay: { close(): void } | undefined;
  const startedAt = clock.now();

  const mcpFace = createHttpFace(serverFace);
  const engine = deps.engine ?? selectEngine(env.AGENTD_ENGINE);
  const served = createFrontEnd({
    engine,
    config,
    bus,
    clock,
    ids,
    log: log.child({ component: 'http' }),
    ...(limits && { limits }),
    mode: deps.mode ?? 'web',
    mcpFace,
    instanceId,
    metrics,
    inspect,
    follower,
    storeId: () => storeId ?? unknownStoreId(),
    routes: createRoutes({
      version: VERSION,
      engine: engine.engine.name,
      startedAt,
      clock,
      isReady: () => ready,
      config,
      waiter,
      ids,
      metrics,
      mode: deps.mode ?? 'web',
    }),
  });
  // The OAuth callback URL is known once the front end listens (port 0 picks one).
  const frontEnd: FrontEnd = {
    ...served,
    engine: served.engine,
    async listen(host, port, options) {
      await identify();
      const bound = await served.listen(host, port, options);
      listening = { host, port: bound };
      return bound;
    },
    close: () => served.close(),
    connections: () => served.connections(),
  };

  return {
    bus,
    frontEnd,
    serverFace,
    inspect,
    async open() {
      await store.open();
      await identify();
      await secrets.open();
      await cluster?.open();
      if (childrenFile) reapLeftovers(childrenFile, log.child({ component: 'mcp' }));
    },
    killChildren: () => children.killAll(),
    async start() {
      await agent.start();
      expiry.start();
      await mcp.start();
      await cluster?.join();
      if (inspect && config.server.inspectRelay)
        relay = startRelay(inspect, config.server.inspectRelay, log.child({ component: 'inspect' }));
      ready = true;
    },
    async stop() {
      await expiry.stop(); // before the agent and the store it sweeps
      relay?.close();
      unwatchMetrics();
      unwatchTraces?.();
      frontEnd.close();
      await mcpFace.close(); // /mcp exchanges of 2026-07-28 clients still open
      waiter.close();
      follower.close();
      await agent.stop();
      await mcp.stop();
      await cluster?.close();
      await store.close();
      await secrets.close();
      await tracing?.shutdown();
    },
  };
}
