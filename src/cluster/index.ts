/**
 * Many agentd instances over one Redis or one PostgreSQL (media.ts): each session runs on its lease holder; every
 * instance serves every session.
 * - Session commands registered through `route(bus)` run at the session's holder (forwarding.ts); a turn run
 *   elsewhere is watched until it ends, or ended here when its runner or Redis is lost (remote-turns.ts); a turn whose
 *   owner died is taken over by an instance that notices its free lease (orphan-turns.ts), caller or none.
 * - Runtime tool-server changes reach every instance; listings show each instance's status (tool-servers.ts).
 * - `agent.health` is `degraded` (`redis: unreachable`, `postgres: unreachable`) while a medium's connection is down.
 * - `agent.*` events reach, in order, every instance that watches their session (fan-out.ts).
 */
import type { Bus, CommandSpec, EventSpec } from '../bus/index.ts';
import { isoNow } from '../clock.ts';
import type { ClusterMedia } from './media.ts';
import { createFanOut, type FanOutOptions } from './fan-out.ts';
import { createForwarding, unavailable, type Handler } from './forwarding.ts';
import { createLeases, type LeaseOptions } from './leases.ts';
import { watchOrphanTurns } from './orphan-turns.ts';
import { createRemoteTurns } from './remote-turns.ts';
import type { ClusterShared } from './shared.ts';
import { createToolServerSync } from './tool-servers.ts';

/** The agent's session commands, by role (passed in: the cluster does not import the agent). */
export interface SessionCommandNames<Name extends string = string> {
  /** Every command that runs where its session is held; its payload names the session (`sessionId`). */
  scoped: readonly Name[];
  /** Queues a turn (answers `{ turnId }`); its end comes as `agent.response` or `agent.error`. */
  sendMessage: NoInfer<Name>;
  /** Opens a session and does nothing else (payload `{ sessionId }`). */
  takeOver: NoInfer<Name>;
}

export interface ClusterOptions<Name extends string = string> extends Omit<ClusterShared, 'medium'> {
  /** What the cluster runs on (media.ts `redisMedia`, `postgresMedia`). */
  media: ClusterMedia;
  /** Every event of this bus named `agent.*` is shared with the other instances. */
  bus: Pick<Bus<CommandSpec, EventSpec>, 'on' | 'onAny' | 'emit'>;
  sessionCommands: SessionCommandNames<Name>;
  /** The commands that change tool servers at run time, shared with every instance (src/tools `TOOL_SERVER_COMMANDS`). */
  toolServerCommands: readonly string[];
  /** The sessions in this instance's memory (the agent service). */
  sessions: {
    holds: (sessionId: string) => boolean;
    /** A session this instance ran now belongs to another: take it out of memory. */
    drop: (sessionId: string) => void;
    /** Lets a dormant session leave memory (its close is told to `sessionClosed`); false when it is not dormant. */
    release: (sessionId: string) => Promise<boolean>;
  };
  /** A session's stored facts after seq `since`: a watched session's gaps are read back from them (fan-out.ts). */
  readFacts?: FanOutOptions['readFacts'];
  /** A session's last seq: where a new watch measures gaps from (fan-out.ts). */
  lastSeq?: FanOutOptions['lastSeq'];
  /** What a new watch of a session hears first from its holder (fan-out.ts): the reply its turn streamed so far. */
  seedOf?: FanOutOptions['seedOf'];
  /** The sessions the store marks with a turn open (where turns resume): those whose owner died are taken over. */
  openTurnSessions?: () => Promise<string[]>;
  /** The store identity held here, and where a lease's evidence of the store going back goes (leases.ts). */
  store?: LeaseOptions['store'];
}

/** `agent.health`'s answer while a medium's connection is down (`<medium>: unreachable`, since when), else undefined. */
function healthWhileAway(media: readonly ClusterShared['medium'][], clock: ClusterShared['clock']) {
  let lostSince: string | undefined;
  for (const m of media) m.watch({ lost: () => (lostSince ??= isoNow(clock)), back: () => undefined });
  return () => {
    const away = media.find((m) => !m.isReady());
    if (!away) return (lostSince = undefined);
    lostSince ??= isoNow(clock);
    return { status: 'degraded', cause: `${away.name}: unreachable`, since: lostSince };
  };
}

export function createCluster<Name extends string>(options: ClusterOptions<Name>) {
  const { keyPrefix, instanceId, leaseMs, log, clock, ids, bus, sessions, media } = options;
  const { live, control } = media;
  const scoped = new Set<string>(options.sessionCommands.scoped);
  const shared: ClusterShared = { medium: control, keyPrefix, instanceId, leaseMs, clock, ids, log };
  const toolServers = createToolServerSync({ ...shared, registry: media.registry });
  const toolServerCommands = new Set(options.toolServerCommands);
  let heartbeat: NodeJS.Timeout | undefined;
  const leases = createLeases({
    ...{ ...shared, store: options.store },
    backend: media.leases,
    onLost: sessions.drop, // (its close reaches sessionClosed)
    onTaken: (sessionId) => fanOut.taken(sessionId),
  });
  const forwarding = createForwarding({
    ...shared,
    leases,
    holds: sessions.holds,
    releaseIfDormant: sessions.release,
    turnCommand: options.sessionCommands.sendMessage,
  });

  const health = healthWhileAway([live, control], clock);

  const fanOut = createFanOut({
    ...shared,
    medium: live,
    factsByReference: media.factsByReference,
    holder: (sessionId) => leases.holder(sessionId),
    bus,
    ...(options.readFacts && { readFacts: options.readFacts }),
    ...(options.lastSeq && { lastSeq: options.lastSeq }),
    ...(options.seedOf && { seedOf: options.seedOf }),
  });
  const remoteTurns = createRemoteTurns({
    ...shared,
    medium: live,
    bus,
    fanOut,
    run: forwarding.run,
    holds: sessions.holds,
    holder: (sessionId) => leases.holder(sessionId),
    takeOver: options.sessionCommands.takeOver,
  });
  let orphans: { close(): void } | undefined;
  const offStatus = bus.on('mcp.serverStatus', (e) =>
    toolServers.statusChanged(e.payload as { name: string; status: string }),
  );
  const unwatchLive = live.watch({ lost: remoteTurns.lost, back: () => undefined }); // (the medium logs the outage)

  return {
    /** The Redis command connection, when the cluster has one (shared by the rate limits). */
    redis: media.redis,
    /** This instance's fencing token for a session it holds (leases.ts), for every write of the session. */
    fenceOf: leases.fence,
    /** Connects and starts listening; rejects naming the URL when a medium cannot be reached. */
    async open(): Promise<void> {
      await live.open();
      if (control !== live) await control.open();
      await control.subscribe(forwarding.channel, forwarding.onInbox);
      await control.subscribe(toolServers.channel, toolServers.onMessage);
      await fanOut.open();
    },
    /** Once the tool servers of the config started: applies the runtime changes other instances recorded, then reports statuses. */
    async join(): Promise<void> {
      await toolServers.join().catch(unavailable);
      const beat = () => toolServers.heartbeat().catch(() => undefined); // the medium away: the next beat writes them
      await beat();
      heartbeat = setInterval(() => void beat(), Math.max(100, Math.floor(leaseMs / 3)));
      heartbeat.unref();
      // Turns dead owners left running are taken over once this instance's tool servers were attempted.
      const { openTurnSessions } = options;
      if (openTurnSessions)
        orphans ??= watchOrphanTurns({
          ...shared,
          openTurnSessions,
          holds: sessions.holds,
          holder: (sessionId) => leases.holder(sessionId),
          quietUntil: leases.quietUntil,
          run: forwarding.run,
          takeOver: options.sessionCommands.takeOver,
        });
    },
    /** The bus as the agent service should register on it: its session commands run at the session's owner. */
    route<B extends Pick<Bus<CommandSpec, EventSpec>, 'handle'>>(inner: B): B {
      const handle = (name: string, handler: Handler) => {
        if (name === 'agent.health') return inner.handle(name, (command) => health() ?? handler(command));
        if (toolServerCommands.has(name)) return inner.handle(name, toolServers.wrap(name, handler));
        if (!scoped.has(name)) return inner.handle(name, handler);
        const offHere = forwarding.handleHere(name, handler);
        const atOwner =
          name === options.sessionCommands.sendMessage
            ? remoteTurns.sendMessage
            : (command: Parameters<Handler>[0]) => forwarding.run(command, 0);
        const off = inner.handle(name, atOwner);
        return () => {
          offHere();
          off();
        };
      };
      return { ...inner, handle };
    },
    /** Which sessions this instance's WebSocket clients watch: only their frames come from other instances. */
    interest: { watch: fanOut.watch, unwatch: fanOut.unwatch },
    /** A session left this instance's memory: unless it was opened again meanwhile, its lease goes, so another instance can take it at once. */
    sessionClosed: (sessionId: string): void => {
      if (sessions.holds(sessionId)) return;
      fanOut.forget(sessionId);
      forwarding.release(sessionId);
    },
    /** Gives every lease up and disconnects (after the agent service stopped). */
    async close(): Promise<void> {
      fanOut.close();
      remoteTurns.close();
      unwatchLive();
      orphans?.close();
      offStatus();
      clearInterval(heartbeat);
      await leases.close();
      forwarding.close();
      await Promise.all([live.close(), ...(control === live ? [] : [control.close()])]);
    },
  };
}
