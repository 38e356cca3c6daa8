import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { AnyActorRef } from 'xstate';
import { parseSessionEvent as parseEvent } from './conversation/session-events.ts';
import {
  createAgentService,
  createReactions,
  createReplyTracker,
  createTurnFollower,
  createTurnWaiter,
  createUnnamedExpiry,
} from './agent/index.ts';
import { createObservability } from './app/observability.ts';
import type { App, AppCommands, AppDeps, AppEvents } from './app/types.ts';
import { createBus } from './bus/index.ts';
import { createInspectHub, startRelay } from './inspect/index.ts';
import { createIdSource, systemClock } from './clock.ts';
import { createRedactor } from './config/redact.ts';
import type { AgentConfig } from './config/schema.ts';
import { isShared } from './config/shared.ts';
import { createRoutes } from './http/routes/index.ts';
import { selectEngine } from './http/engine/index.ts';
import { createFrontEnd } from './http/server.ts';
import { createLlmClient } from './llm/index.ts';
import { createLimits } from './http/limits.ts';
import { createChildRegistry, createMcpService, reapLeftovers, runtimePolicyOf } from './tools/index.ts';
import { a2aPushFeature } from './a2a-face/push/feature/index.ts';
import { clusterOf, sharedLimitsOf } from './app/cluster.ts';
import { stopInOrder } from './app/stop-steps.ts';
import { noticeLosses, storeChecks, watchStoreLoss } from './app/store-loss.ts';
import { buildFeatures } from './app/features.ts';
import { facesOf } from './app/faces.ts';
import { memoryFeature } from './memory/feature/index.ts';
import { schedulesFeature } from './schedules/feature/index.ts';
import { spendFeature } from './spend/feature/index.ts';
import { webhooksFeature } from './webhooks/feature/index.ts';
import { listeningFrontEnd, oauthCallback, unknownStoreId } from './app/front-end.ts';
import { createStore, records, timedAppends, type LossEvidence } from './store/index.ts';
import { createSecretStore } from './store/secret-store.ts';
import { VERSION } from './package-info.ts';
export type { App, AppBus, AppCommands, AppDeps, AppEvents } from './app/types.ts';

/**
 * The features (src/http/feature-mount.ts), in their routes' order; each built after the features it needs. A new
 * feature is its folder's `feature/index.ts` and one entry here.
 */
const FEATURES = [schedulesFeature, memoryFeature, webhooksFeature, spendFeature, a2aPushFeature] as const;

/** Builds every component and wires them through one bus. Never listens: the caller does. */
export function createApp(config: AgentConfig, deps: AppDeps): App {
  const { log } = deps;
  const redactor = deps.redactor ?? createRedactor(config);
  const clock = deps.clock ?? systemClock;
  const ids = deps.ids ?? createIdSource();
  const bus = createBus<AppCommands, AppEvents>({ log: log.child({ component: 'bus' }), clock, ids });
  const env = deps.env ?? process.env;
  const observability = createObservability(config, {
    bus,
    clock,
    env,
    ...(deps.spanExporter && { spanExporter: deps.spanExporter }),
  });
  const { metrics, observe } = observability;
  const engineStore = createStore(config.storage, { log: log.child({ component: 'store' }), clock, parseEvent });
  const store = noticeLosses(timedAppends(engineStore, metrics.append), (e) => storeLoss.noticed(e));
  const llm = deps.llm ?? createLlmClient(config.llm, { log: log.child({ component: 'llm' }), env, clock, observe });
  const instanceId = randomUUID();
  const serviceId = deps.serviceId ?? instanceId;
  // A shared service (keys, or a non-loopback bind) lets runtime connects start only what the operator allowed.
  const runtime = runtimePolicyOf(config, { shared: isShared(config, deps.bindHost), env });
  // Tool-server process groups are recorded beside the session logs, so a crash leaves none behind for long.
  const childrenFile = config.storage.type === 'jsonl' ? join(config.storage.dir, '.agentd-children.json') : undefined;
  const children = createChildRegistry(childrenFile, log.child({ component: 'mcp' }));
  const inspect = config.server.inspect
    ? createInspectHub({ content: config.server.inspectContent, redact: redactor.deep })
    : undefined;
  const registerActor = inspect && { registerActor: (id: string, actor: AnyActorRef) => inspect.register(id, actor) };
  if (inspect)
    bus.on('mcp.serverLog', ({ payload }) => inspect.notice(`mcp:${payload.serverId}`, 'mcpServerLog', payload));
  // The store identity held here (read before the front end listens), and where evidence of the store going back goes.
  const identity = {
    storeId: () => storeId,
    noticed: (e?: LossEvidence) => (e ? storeLoss.noticed(e) : storeLoss.suspect()),
  };
  const replies = createReplyTracker(bus); // what a subscribe mid-reply is sent first, and the cluster seeds a watch with
  // The one cycle left: the cluster moves the agent's sessions between instances, and the agent sends through the
  // cluster's routing (serviceBus); so the cluster reads the agent through `heldSessions`, which only runs once both exist.
  const heldSessions = () => agent;
  const cluster = clusterOf(
    config,
    { instanceId, log: log.child({ component: 'cluster' }), clock, ids, bus, store, replies, identity },
    heldSessions,
  );
  const serviceBus = cluster ? cluster.route(bus) : bus;
  // Feature state on the sessions' medium (the record store): each feature's records, the reactions' checkpoints.
  const recordStore = records.createRecordStore(config.storage, { log: log.child({ component: 'records' }), clock });
  // OAuth registrations and tokens of tool servers, and the faces' keys, live on the record store.
  const secrets = createSecretStore(recordStore, log.child({ component: 'secrets' }));
  const callback = oauthCallback();
  const mcp = createMcpService({
    ...{ config, bus: serviceBus, log: log.child({ component: 'mcp' }), clock, instanceId, serviceId, runtime },
    ...{ clientInfo: { name: 'agentd', version: VERSION }, children, redactor, secrets, env },
    callbackUrl: callback.url,
    ...registerActor,
  });
  const follower = createTurnFollower({ bus, store, interest: cluster?.interest, replies });
  const mode = deps.mode ?? 'web';
  // The features, each built from the agent file and these ports, after the ones it needs (src/app/features.ts).
  const { mounts: features, ports } = buildFeatures(FEATURES, {
    ...{ config, bus, records: recordStore, secrets, follower, clock, log, env, metrics, mode },
    addSecret: redactor.addSecret,
  });
  const reactions = createReactions({
    ...{ reactions: features.flatMap((f) => f.reactions ?? []), records: recordStore },
    ...{ log: log.child({ component: 'reactions' }), now: () => clock.now() },
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
    ...(cluster && {
      orphanedTurnReason: 'owner_lost',
      onSessionClosed: cluster.sessionClosed,
      fenceOf: cluster.fenceOf,
    }),
    onSessionDeleted: ports.webhooks.sessionDeleted,
    ...(ports.memory && { memory: ports.memory }),
    ...{ reactions, ...(ports.spend && { spend: ports.spend }) },
    ...(config.server.resumeTurns && { resumeTurns: config.server.maxTurnResumptions }),
    waitForToolServers: true,
    appCalls: { follower, timeoutMs: config.server.requestTimeoutMs },
  });
  const unnamed = config.server.limits.unnamedSessions;
  const expiry = createUnnamedExpiry({ bus, store, clock, log: log.child({ component: 'agent' }), ...unnamed });
  const waiter = createTurnWaiter(bus, config.server.requestTimeoutMs, follower);
  const faces = facesOf(config, {
    ...{ bus, log, ids, clock, waiter, follower, secrets, serviceId, instanceId, model: llm.model },
    push: ports['a2a-push'],
  });
  const sharedLimits = sharedLimitsOf(config, cluster);
  const limits = deps.limits ?? (sharedLimits && createLimits(config.server.limits, clock, sharedLimits));
  let ready = false;
  // The store's identity, read before the service opens or listens: every WebSocket's first frame carries it.
  let storeId: string | undefined;
  const identify = async () => void (storeId ??= await store.storeId());
  let relay: { close(): void } | undefined;
  /** Set once `stop()` is called: a start still under way goes no further. */
  let stopping = false;
  const startedAt = clock.now();

  const engine = deps.engine ?? selectEngine(env.AGENTD_ENGINE);
  const served = createFrontEnd({
    engine,
    config,
    bus,
    clock,
    ids,
    log: log.child({ component: 'http' }),
    ...(limits && { limits }),
    mode,
    faces: faces.mounts,
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
      mode,
      features,
      faces: faces.mounts,
    }),
  });
  const frontEnd = listeningFrontEnd(served, identify, callback.listened);
  const storeLoss = watchStoreLoss({
    ...{ store, log: log.child({ component: 'store' }), clock, agent, waiter, counted: metrics.storeDataLost },
    ...storeChecks(config.storage.type),
    current: () => storeId ?? '',
    adopted: (change) => served.storeChanged({ ...change, storeId: (storeId = change.storeId) }),
  });

  return {
    bus,
    frontEnd,
    engine: engine.engine.name,
    serverFace: faces.serverFace,
    inspect,
    a2aPush: ports['a2a-push'],
    async open() {
      await store.open();
      await recordStore.open(); // writes nothing until a feature does (no file on JSONL)
      await identify();
      storeLoss.start(store);
      await cluster?.open();
      for (const feature of features) await feature.open?.();
      if (childrenFile) reapLeftovers(childrenFile, log.child({ component: 'mcp' }));
    },
    killChildren: () => children.killAll(),
    /** Starts the parts in order; a stop asked meanwhile (a signal during start-up) ends it between two parts. */
    async start() {
      await agent.start();
      expiry.start();
      await mcp.start(); // waits for the tool servers' first attempts: a stop may come meanwhile
      if (stopping) return;
      await cluster?.join();
      // First: a session with a turn a restart left running opens only once this ran, and a feature's start may send
      // to one (the scheduler's recovery).
      agent.resumeLeftRunning(); // the turns a restart left running go on, their tool servers attempted
      for (const feature of features) if (!stopping) await feature.start?.();
      if (stopping) return;
      if (inspect && config.server.inspectRelay)
        relay = startRelay(inspect, config.server.inspectRelay, log.child({ component: 'inspect' }));
      ready = true;
    },
    async stop() {
      stopping = true;
      await stopInOrder(
        [
          ['the expiry of unnamed sessions', () => expiry.stop()], // before the agent and the store it sweeps
          ...features.map((f): [string, () => unknown] => [`${f.name}: no new work`, () => f.stop?.()]),
          ['the inspector relay', () => relay?.close()],
          ['the metrics watch', () => observability.unwatch()],
          ['the store checks', () => storeLoss.stop()],
          ['the front end', () => frontEnd.close()],
          ['the MCP face', () => faces.mcpFace.close()], // /mcp exchanges of 2026-07-28 clients still open
          ['the turn waiter', () => waiter.close()],
          ['the sessions', () => agent.stop()],
          ...features.map((f): [string, () => unknown] => [`${f.name}: its storage`, () => f.close?.()]),
          ['the tool servers', () => mcp.stop()],
          ['the record store', () => recordStore.close()], // after the sessions (their checkpoints) and tool servers (their tokens)
          ['the cluster', () => cluster?.close()],
          ['the store', () => store.close()],
          ['observability', () => observability.shutdown()],
        ],
        log,
      );
    },
  };
}
