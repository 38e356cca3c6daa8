/**
 * Many agentd instances over one Redis: each session runs on one instance (its lease holder), and
 * every instance serves every session.
 *
 * Contracts:
 * - Session commands (`agent.sendMessage`, `reset`, `cancel`, `approvals`, `approve`,
 *   `deleteSession`) registered through `route(bus)` run where the session's lease is: here when
 *   this instance holds it or it was free (it is taken), otherwise they are forwarded to the holder's
 *   inbox channel (`<prefix>inst:<instanceId>`) and its answer (result or error) comes back the same
 *   way. Other commands run here.
 * - An owner that does not take or answer a forwarded command (it died) is skipped: the command waits
 *   until the owner's lease expires, takes the session and runs here; past `leaseMs` plus the forward
 *   time limit it fails with SERVICE_UNAVAILABLE, as does any command while Redis is unreachable.
 * - A turn this instance asked another to run (a forwarded `agent.sendMessage`) is watched until its
 *   end arrives: if its runner's lease lapses (the runner died), this instance takes the session over,
 *   which ends the turn as `owner_lost`; if the connection to Redis breaks (its frames may be lost),
 *   it ends here at once with an `error` frame, SERVICE_UNAVAILABLE `details.reason: "redis"`.
 * - Runtime tool-server changes (connect, remove, restart) are applied by every instance, and server
 *   listings show each instance's status (see tool-servers.ts).
 * - `agent.health` reports `degraded` (cause `redis: unreachable`, since when) while the connection to
 *   Redis is down, whatever the agent service says; its own answer otherwise.
 * - Every `agent.*` event emitted here reaches the bus of every other instance that watches its
 *   session (a WebSocket client there, or a caller waiting on the turn), in order (fan-out.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus, CommandSpec, Envelope, EventSpec } from '../bus/index.ts';
import { isoNow, type Clock, type IdSource } from '../clock.ts';
import { AppError, isAppError, type ErrorCode } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { createRedisConnection } from '../redis/index.ts';
import { createFanOut } from './fan-out.ts';
import { createLeases } from './leases.ts';
import { createToolServerSync, TOOL_SERVER_COMMANDS } from './tool-servers.ts';

const SESSION_COMMANDS = new Set(['agent.sendMessage', 'agent.reset', 'agent.cancel', 'agent.approvals', 'agent.approve', 'agent.deleteSession']);
/** How long a forwarded command may wait for the owner's answer before the owner counts as gone. */
const FORWARD_TIMEOUT_MS = 5000;
/** Forwarding hops a command may take while ownership moves. */
const MAX_HOPS = 3;

export interface ClusterOptions {
  url: string;
  keyPrefix: string;
  instanceId: string;
  leaseMs: number;
  log: Logger;
  clock: Clock;
  ids: IdSource;
  /** Every event of this bus named `agent.*` is shared with the other instances. */
  bus: Pick<Bus<CommandSpec, EventSpec>, 'on' | 'onAny' | 'emit'>;
  /** The sessions in this instance's memory (the agent service). */
  sessions: {
    holds: (sessionId: string) => boolean;
    /** A session this instance ran now belongs to another: take it out of memory. */
    drop: (sessionId: string) => void;
  };
}

type Handler = (command: Envelope) => unknown;
type WireCommand = { kind: 'command'; id: string; from: string; hops: number; name: string; payload: unknown; correlationId: string; sessionId?: string };
type WireReply = { kind: 'reply'; id: string; ok: true; result: unknown } | { kind: 'reply'; id: string; ok: false; error: { code: ErrorCode; message: string; details: Record<string, unknown> } };
/** A turn asked for here; `turnId` once the runner answered. */
type RemoteTurn = { correlationId: string; sessionId: string; turnId?: string };

class OwnerGone extends Error {}

export function createCluster(options: ClusterOptions) {
  const { keyPrefix, instanceId, leaseMs, log, clock, ids, bus, sessions } = options;
  const client = createRedisConnection(options.url, 'cluster', log);
  const subscriber = client.duplicate();
  const toolServers = createToolServerSync({ client, keyPrefix, instanceId, leaseMs, clock, ids, log });
  let heartbeat: NodeJS.Timeout | undefined;
  const leases = createLeases({ client, keyPrefix, instanceId, leaseMs, log, onLost: sessions.drop });
  const inbox = (instance: string) => `${keyPrefix}inst:${instance}`;
  const local = new Map<string, Handler>();
  const pending = new Map<string, { resolve: (result: unknown) => void; reject: (err: unknown) => void; timer: NodeJS.Timeout }>();

  // Redis reachability, for agent.health: since when the connection is down.
  let lostSince: string | undefined;
  client.on('error', () => (lostSince ??= isoNow(clock)));
  const redisLostSince = () => (client.isReady ? (lostSince = undefined) : (lostSince ??= isoNow(clock)));

  const unavailable = (err: unknown): never => {
    if (isAppError(err)) throw err;
    const cause = err instanceof Error ? err.message : String(err);
    throw new AppError('SERVICE_UNAVAILABLE', `Redis is unavailable: ${cause}`, { reason: 'redis', cause });
  };

  /** Runs a session command at its owner: here, at the current owner, or here once a silent owner's lease ran out. */
  async function run(command: Envelope, hops: number): Promise<unknown> {
    const sessionId = (command.payload as { sessionId: string }).sessionId;
    const deadline = clock.now() + leaseMs + FORWARD_TIMEOUT_MS;
    let silent: string | undefined;
    for (;;) {
      const owner = await leases.claim(sessionId).catch(unavailable);
      if (owner === instanceId) return runHere(command, sessionId);
      if (owner !== silent && hops < MAX_HOPS) {
        try {
          return await forward(owner, command, hops + 1);
        } catch (err) {
          if (!(err instanceof OwnerGone)) throw err;
          log.warn({ sessionId, owner }, 'the owner of a session does not answer; waiting for its lease to expire');
          silent = owner;
        }
      }
      if (clock.now() > deadline) throw new AppError('SERVICE_UNAVAILABLE', `The instance running session ${sessionId} does not answer`, { reason: 'owner_lost' });
      await sleep(Math.min(200, leaseMs / 4));
    }
  }

  /** Runs a command of a session this instance holds; a lease taken for a command that left no session open (a delete) is given back. */
  async function runHere(command: Envelope, sessionId: string): Promise<unknown> {
    try {
      return await (local.get(command.name) as Handler)(command);
    } finally {
      if (!sessions.holds(sessionId)) release(sessionId);
    }
  }

  function release(sessionId: string): void {
    leases.release(sessionId).catch((err: unknown) => log.warn({ err, sessionId }, 'releasing a session lease failed'));
  }

  async function forward(owner: string, command: Envelope, hops: number): Promise<unknown> {
    const id = ids();
    const { name, payload, correlationId, sessionId } = command;
    const message: WireCommand = { kind: 'command', id, from: instanceId, hops, name, payload, correlationId, ...(sessionId !== undefined && { sessionId }) };
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(id)?.reject(new OwnerGone()), FORWARD_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
    });
    const receivers = await client.publish(inbox(owner), JSON.stringify(message)).catch((err: unknown) => {
      settle(id);
      return unavailable(err);
    });
    if (receivers === 0) settle(id)?.reject(new OwnerGone()); // nobody listens on its inbox: it is gone
    return answer;
  }

  function settle(id: string) {
    const waiting = pending.get(id);
    if (!waiting) return undefined;
    pending.delete(id);
    clearTimeout(waiting.timer);
    return waiting;
  }

  function onInbox(raw: string): void {
    const message = JSON.parse(raw) as WireCommand | WireReply;
    if (message.kind === 'reply') {
      const waiting = settle(message.id);
      if (message.ok) waiting?.resolve(message.result);
      else waiting?.reject(new AppError(message.error.code, message.error.message, message.error.details));
      return;
    }
    const { id, from, hops, name, payload, correlationId, sessionId } = message;
    const command: Envelope = { id, ts: clock.now(), correlationId, name, payload, ...(sessionId !== undefined && { sessionId }) };
    const reply = (answer: WireReply) =>
      client.publish(inbox(from), JSON.stringify(answer)).catch((err: unknown) => log.warn({ err, name }, 'cluster: could not answer a forwarded command'));
    run(command, hops).then(
      (result) => reply({ kind: 'reply', id, ok: true, result }),
      (err: unknown) => {
        const e = isAppError(err) ? err : new AppError('INTERNAL_ERROR', err instanceof Error ? err.message : String(err));
        return reply({ kind: 'reply', id, ok: false, error: { code: e.code, message: e.message, details: e.details } });
      },
    );
  }

  const fanOut = createFanOut({ client, subscriber, keyPrefix, instanceId, bus, log });

  // Turns run elsewhere for this instance's callers, by correlation id, until their end is seen;
  // their session's frames are watched meanwhile.
  const remoteTurns = new Map<string, RemoteTurn>();
  const forget = (turn: RemoteTurn) => {
    if (remoteTurns.delete(turn.correlationId)) fanOut.unwatch(turn.sessionId);
  };
  /** Sends a message to wherever its session runs, watching the turn when that is elsewhere. */
  async function sendMessage(command: Envelope): Promise<unknown> {
    const { sessionId } = command.payload as { sessionId: string };
    const turn: RemoteTurn = { correlationId: command.correlationId, sessionId };
    remoteTurns.set(turn.correlationId, turn); // before it runs: its end may arrive before the answer
    await fanOut.watch(sessionId);
    try {
      const result = (await run(command, 0)) as { turnId: string };
      if (sessions.holds(sessionId)) forget(turn);
      else turn.turnId = result.turnId;
      return result;
    } catch (err) {
      forget(turn);
      throw err;
    }
  }
  /** A turn's end (response or error): the remote turn it belongs to is done. */
  const seenEnd = (e: Envelope) => {
    const turnId = (e.payload as { turnId?: string }).turnId;
    for (const t of remoteTurns.values()) if (t.correlationId === e.correlationId || (turnId !== undefined && t.turnId === turnId)) forget(t);
  };
  const unlisten = [
    bus.on('agent.response', seenEnd),
    bus.on('agent.error', seenEnd),
    bus.on('mcp.serverStatus', (e) => toolServers.statusChanged(e.payload as { name: string; status: string })),
  ];
  /** A runner whose lease lapsed is gone: taking its session over ends the turn (owner_lost). */
  const adopter = setInterval(() => {
    for (const t of remoteTurns.values()) {
      if (t.turnId === undefined) continue;
      if (sessions.holds(t.sessionId)) {
        forget(t); // runs here now: its end is emitted here
        continue;
      }
      leases.holder(t.sessionId).then(
        (holder) => holder === null && run({ id: ids(), ts: clock.now(), correlationId: ids(), name: 'agent.approvals', payload: { sessionId: t.sessionId } }, 0),
        () => undefined, // Redis away: the subscriber's error ends the turn
      ).catch((err: unknown) => log.warn({ err, sessionId: t.sessionId }, 'taking over a session failed'));
    }
  }, Math.max(100, Math.floor(leaseMs / 2)));
  adopter.unref();
  /** The connection that brings remote frames broke: the callers of remote turns stop waiting. */
  const lostRemoteTurns = () => {
    for (const { correlationId, sessionId, turnId } of remoteTurns.values()) {
      if (turnId === undefined) continue; // its forward fails by itself
      const message = 'Lost touch with the instance running this turn (Redis unreachable); its outcome will be in the session history';
      fanOut.emitHere('agent.error', { code: 'SERVICE_UNAVAILABLE', message, details: { reason: 'redis' }, sessionId, turnId }, { correlationId, sessionId });
    }
  };
  subscriber.on('error', lostRemoteTurns); // (the command connection logs the outage)

  return {
    /** The command connection (shared by the rate limits). */
    redis: client,
    /** Connects to Redis and starts listening; rejects naming the URL when Redis cannot be reached. */
    async open(): Promise<void> {
      await client.connect();
      await subscriber.connect();
      await subscriber.subscribe(inbox(instanceId), onInbox);
      await subscriber.subscribe(toolServers.channel, toolServers.onMessage);
    },
    /** Once the tool servers of the config started: applies the runtime changes other instances recorded, then reports statuses. */
    async join(): Promise<void> {
      await toolServers.join().catch(unavailable);
      const beat = () => toolServers.heartbeat().catch(() => undefined); // Redis away: the next beat writes them
      await beat();
      heartbeat = setInterval(() => void beat(), Math.max(100, Math.floor(leaseMs / 3)));
      heartbeat.unref();
    },
    /** The bus as the agent service should register on it: its session commands run at the session's owner. */
    route<B extends Pick<Bus<CommandSpec, EventSpec>, 'handle'>>(inner: B): B {
      const handle = (name: string, handler: Handler) => {
        if (name === 'agent.health') {
          return inner.handle(name, (command) => {
            const since = redisLostSince();
            return since === undefined ? handler(command) : { status: 'degraded', cause: 'redis: unreachable', since };
          });
        }
        if (TOOL_SERVER_COMMANDS.has(name)) return inner.handle(name, toolServers.wrap(name, handler));
        if (!SESSION_COMMANDS.has(name)) return inner.handle(name, handler);
        local.set(name, handler);
        const off = inner.handle(name, (command) => (name === 'agent.sendMessage' ? sendMessage(command) : run(command, 0)));
        return () => {
          local.delete(name);
          off();
        };
      };
      return { ...inner, handle };
    },
    /** Which sessions this instance's WebSocket clients watch: only their frames come from other instances. */
    interest: { watch: fanOut.watch, unwatch: fanOut.unwatch },
    /** A session left this instance's memory: unless it was opened again meanwhile, its lease goes, so another instance can take it at once. */
    sessionClosed: (sessionId: string): void => {
      if (!sessions.holds(sessionId)) release(sessionId);
    },
    /** Gives every lease up and disconnects (after the agent service stopped). */
    async close(): Promise<void> {
      fanOut.close();
      for (const off of unlisten) off();
      clearInterval(adopter);
      clearInterval(heartbeat);
      await leases.close();
      for (const id of [...pending.keys()]) settle(id)?.reject(new AppError('SERVICE_UNAVAILABLE', 'agentd is shutting down'));
      if (subscriber.isOpen) await subscriber.close().catch(() => undefined);
      if (client.isOpen) await client.close().catch(() => undefined);
    },
  };
}

