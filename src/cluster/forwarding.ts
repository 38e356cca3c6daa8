/**
 * Session commands run at their session's owner. `run` runs here when this instance holds the lease or takes a
 * free one, else forwards to the holder's inbox (at most `MAX_HOPS` times while ownership moves, each time after
 * its `beforeForward` resolved) and returns its answer. An owner silent for `FORWARD_TIMEOUT_MS` is waited out
 * until its lease expires; past `leaseMs` plus that, SERVICE_UNAVAILABLE `owner_lost` (the medium's reason while
 * it is unreachable). `close` rejects every waiting forward.
 * A holder whose last turn (`turnCommand`) of a session also came from another instance hands the session over, if
 * dormant, instead of running the next one from elsewhere: the sender takes it and runs the turn. Other commands
 * (reads of its questions, a cancel) never move a session.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Envelope } from '../bus/index.ts';
import { AppError, isAppError, messageOf } from '../errors/index.ts';
import type { createLeases } from './leases.ts';
import type { ClusterShared } from './shared.ts';
import { inboxMessage, readWire, type WireCommand, type WireReply } from './wire.ts';

/** How long a forwarded command may wait for the owner's answer before the owner counts as gone. */
const FORWARD_TIMEOUT_MS = 5000;
/** Forwarding hops a command may take while ownership moves. */
const MAX_HOPS = 3;

export type Handler = (command: Envelope) => unknown;

/** A Redis failure as the callers see it: SERVICE_UNAVAILABLE `reason: "redis"` (an AppError passes as it is). */
export const unavailable = (err: unknown): never => {
  if (isAppError(err)) throw err;
  const cause = messageOf(err);
  throw new AppError('SERVICE_UNAVAILABLE', `Redis is unavailable: ${cause}`, { reason: 'redis', cause });
};

class OwnerGone extends Error {}

/** The holder's answer to a command it did not run: it let the session go, for the sender to take. */
const HANDED_OVER = 'handed_over';
const handedOver = (err: unknown) =>
  isAppError(err) && err.code === 'SERVICE_UNAVAILABLE' && err.details?.reason === HANDED_OVER;

/** A command as it travels to the owner's inbox. */
function wireCommand(command: Envelope, via: Pick<WireCommand, 'id' | 'from' | 'hops'>): WireCommand {
  const { name, payload, correlationId, sessionId } = command;
  return {
    kind: 'command',
    ...via,
    name,
    payload: payload as WireCommand['payload'],
    correlationId,
    ...(sessionId !== undefined && { sessionId }),
  };
}

/** A forwarded command as the owner's handlers take it, received at `ts`. */
function commandOf(message: WireCommand, ts: number): Envelope {
  const { id, name, payload, correlationId, sessionId } = message;
  return { id, ts, correlationId, name, payload, ...(sessionId !== undefined && { sessionId }) };
}

/** The reply to a forwarded command that failed: its AppError, or INTERNAL_ERROR with its message. */
function refusal(id: string, err: unknown): WireReply {
  const e = isAppError(err) ? err : new AppError('INTERNAL_ERROR', messageOf(err));
  return { kind: 'reply', id, ok: false, error: { code: e.code, message: e.message, details: e.details } };
}

export interface ForwardingOptions extends ClusterShared {
  leases: Pick<ReturnType<typeof createLeases>, 'owner' | 'release'>;
  /** Whether a session is in this instance's memory. */
  holds: (sessionId: string) => boolean;
  /** Lets a dormant session leave memory, its lease given up before this resolves true. */
  releaseIfDormant: (sessionId: string) => Promise<boolean>;
  /** The command that starts a turn: where a session's turns come from, it moves. */
  turnCommand: string;
}

export function createForwarding(options: ForwardingOptions) {
  const { medium, keyPrefix, instanceId, leaseMs, leases, holds, clock, ids, log } = options;
  /** Sessions whose last turn run here came from another instance. */
  const forwardedLast = new Set<string>();
  const inbox = (instance: string) => `${keyPrefix}inst:${instance}`;
  const local = new Map<string, Handler>();
  const pending = new Map<
    string,
    { resolve: (result: unknown) => void; reject: (err: unknown) => void; timer: NodeJS.Timeout }
  >();

  async function run(command: Envelope, hops: number, beforeForward?: () => Promise<void>): Promise<unknown> {
    const sessionId = (command.payload as { sessionId: string }).sessionId;
    const deadline = clock.now() + leaseMs + FORWARD_TIMEOUT_MS;
    let silent: string | undefined;
    for (;;) {
      const owner = await leases.owner(sessionId).catch(unavailable);
      if (owner === instanceId) return runHere(command, sessionId, hops > 0);
      if (owner !== silent && hops < MAX_HOPS) {
        try {
          await beforeForward?.();
          return await forward(owner, command, hops + 1);
        } catch (err) {
          if (handedOver(err)) {
            hops++; // whoever has it next runs it
            continue;
          }
          if (!(err instanceof OwnerGone)) throw err;
          log.warn({ sessionId, owner }, 'the owner of a session does not answer; waiting for its lease to expire');
          silent = owner;
        }
      }
      if (clock.now() > deadline)
        throw new AppError('SERVICE_UNAVAILABLE', `The instance running session ${sessionId} does not answer`, {
          reason: 'owner_lost',
        });
      await sleep(Math.min(200, leaseMs / 4));
    }
  }

  /** A lease taken for a command that left no session open (a delete) is given back. */
  async function runHere(command: Envelope, sessionId: string, forwarded: boolean): Promise<unknown> {
    if (command.name === options.turnCommand) {
      if (forwarded) forwardedLast.add(sessionId);
      else forwardedLast.delete(sessionId);
    }
    try {
      return await (local.get(command.name) as Handler)(command);
    } finally {
      if (!holds(sessionId)) release(sessionId);
    }
  }

  function release(sessionId: string): void {
    forwardedLast.delete(sessionId);
    leases.release(sessionId).catch((err: unknown) => log.warn({ err, sessionId }, 'releasing a session lease failed'));
  }

  async function forward(owner: string, command: Envelope, hops: number): Promise<unknown> {
    const id = ids();
    const message = wireCommand(command, { id, from: instanceId, hops });
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(id)?.reject(new OwnerGone()), FORWARD_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
    });
    // The owner's answer travels on another connection and may come before the PUBLISH's own reply, a refusal
    // too: it is awaited below, so it must not count as unhandled meanwhile (Node would end the process).
    answer.catch(() => undefined);
    const receivers = await medium.publish(inbox(owner), JSON.stringify(message)).catch((err: unknown) => {
      settle(id);
      return unavailable(err);
    });
    if (receivers === 0) settle(id)?.reject(new OwnerGone()); // nobody listens on its inbox: it is gone (Redis counts)
    return answer;
  }

  function settle(id: string) {
    const waiting = pending.get(id);
    if (!waiting) return undefined;
    pending.delete(id);
    clearTimeout(waiting.timer);
    return waiting;
  }

  /** A forwarded turn, straight from its sender, of a session whose last turn came from elsewhere too: handed over. */
  async function runOrHandOver(command: Envelope, hops: number): Promise<unknown> {
    const { sessionId } = command.payload as { sessionId: string };
    const moves = command.name === options.turnCommand && hops === 1 && forwardedLast.has(sessionId);
    if (moves && holds(sessionId) && (await options.releaseIfDormant(sessionId)))
      throw new AppError('SERVICE_UNAVAILABLE', 'The session was handed over', { reason: HANDED_OVER });
    return run(command, hops);
  }

  function runForwarded(message: WireCommand): void {
    const { id, from, hops, name } = message;
    const command = commandOf(message, clock.now());
    const reply = (answer: WireReply) =>
      medium
        .publish(inbox(from), JSON.stringify(answer))
        .catch((err: unknown) => log.warn({ err, name }, 'cluster: could not answer a forwarded command'));
    runOrHandOver(command, hops).then(
      (result) => reply({ kind: 'reply', id, ok: true, result }),
      (err: unknown) => reply(refusal(id, err)),
    );
  }

  function onInbox(raw: string): void {
    const message = readWire(inboxMessage, raw, inbox(instanceId), log);
    if (!message) return;
    if (message.kind === 'command') return runForwarded(message);
    const waiting = settle(message.id);
    if (message.ok) waiting?.resolve(message.result);
    else waiting?.reject(new AppError(message.error.code, message.error.message, message.error.details));
  }

  return {
    /** This instance's inbox channel (subscribe `onInbox` to it). */
    channel: inbox(instanceId),
    onInbox,
    run,
    release,
    /** Registers the handler that runs a session command here; returns its unregister function. */
    handleHere(name: string, handler: Handler): () => void {
      local.set(name, handler);
      return () => local.delete(name);
    },
    close(): void {
      for (const id of [...pending.keys()])
        settle(id)?.reject(new AppError('SERVICE_UNAVAILABLE', 'agentd is shutting down'));
    },
  };
}
