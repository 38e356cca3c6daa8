import { EventEmitter } from 'eventemitter3';
import type { Logger } from '../log/index.ts';
import { AppError } from '../errors/index.ts';
import { createIdSource, systemClock, type Clock, type IdSource } from '../clock.ts';
import type { Envelope, SendMeta } from './envelope.ts';

/** Name → payload and result. */
export type CommandSpec = Record<string, { payload: unknown; result: unknown }>;
/** Name → payload. */
export type EventSpec = Record<string, unknown>;

export type CommandHandler<C extends CommandSpec, N extends keyof C & string> = (
  command: Envelope<N, C[N]['payload']>,
) => C[N]['result'] | Promise<C[N]['result']>;

export type EventListener<E extends EventSpec, N extends keyof E & string> = (event: Envelope<N, E[N]>) => unknown;

export type AnyEvent<E extends EventSpec> = Envelope<keyof E & string, E[keyof E]>;

/**
 * An in-process bus: one handler per command, listeners by event name, by session and for every event. A message's
 * session is its payload's `sessionId` (when it is a string), so no sender names it twice.
 */
export interface Bus<C extends CommandSpec, E extends EventSpec> {
  /** The one handler of a command (a second throws); returns its unregistration. */
  handle<N extends keyof C & string>(name: N, handler: CommandHandler<C, N>): () => void;
  /** Resolves with the handler's result or rejects with its error (INTERNAL_ERROR without a handler). */
  execute<N extends keyof C & string>(name: N, payload: C[N]['payload'], meta?: SendMeta): Promise<C[N]['result']>;
  /** Returns the unsubscription. */
  on<N extends keyof E & string>(name: N, listener: EventListener<E, N>): () => void;
  /** Every event of one session (its payload's `sessionId`); returns the unsubscription. */
  onSession(sessionId: string, listener: (event: AnyEvent<E>) => unknown): () => void;
  onAny(listener: (event: AnyEvent<E>) => unknown): () => void;
  /**
   * Delivers to the session's listeners, then the name's, then `onAny`'s, each group in the order they subscribed;
   * one that unsubscribes meanwhile is skipped, one that subscribes meanwhile hears the next event. A throwing or
   * rejecting listener is logged and never stops the others.
   */
  emit<N extends keyof E & string>(name: N, payload: E[N], meta?: SendMeta): Envelope<N, E[N]>;
  /** The listeners of one event name; without a name, every listener (by name, by session and `onAny`). */
  listenerCount(name?: keyof E & string): number;
}

export interface BusDeps {
  log: Logger;
  clock?: Clock;
  ids?: IdSource;
}

/** One subscription: the emitter calls `deliver` with it as `this`, and unsubscribes it by that pair. */
interface Subscription {
  listener: (e: Envelope) => unknown;
  live: boolean;
  failed: (err: unknown, name: string, how: string) => void;
}

/** Skips a subscription ended during the emit (which walks the list it started with); contains a failing listener. */
function deliver(this: Subscription, event: Envelope): void {
  if (!this.live) return;
  try {
    const out = this.listener(event);
    if (out instanceof Promise) out.catch((err: unknown) => this.failed(err, event.name, 'rejected'));
  } catch (err) {
    this.failed(err, event.name, 'threw');
  }
}

/** Listeners by key on an eventemitter3 emitter, each delivered to through `deliver`. */
function createListeners(failed: Subscription['failed']) {
  const emitter = new EventEmitter<Record<string | symbol, [Envelope]>, Subscription>();
  return {
    emit: (key: string | symbol, event: Envelope): void => void emitter.emit(key, event),
    count: (key?: string | symbol): number =>
      key === undefined
        ? emitter.eventNames().reduce((n, k) => n + emitter.listenerCount(k), 0)
        : emitter.listenerCount(key),
    add(key: string | symbol, listener: (e: Envelope) => unknown): () => void {
      const sub: Subscription = { listener, live: true, failed };
      emitter.on(key, deliver, sub);
      return () => {
        if (!sub.live) return;
        sub.live = false;
        emitter.off(key, deliver, sub);
      };
    },
  };
}

const sessionOf = (payload: unknown): string | undefined => {
  const sessionId =
    typeof payload === 'object' && payload !== null ? (payload as { sessionId?: unknown }).sessionId : undefined;
  return typeof sessionId === 'string' ? sessionId : undefined;
};

export function createBus<C extends CommandSpec, E extends EventSpec>(deps: BusDeps): Bus<C, E> {
  const clock = deps.clock ?? systemClock;
  const ids = deps.ids ?? createIdSource();
  const handlers = new Map<string, (c: Envelope) => unknown>();
  const failed = (err: unknown, name: string, how: string) =>
    deps.log.error({ err, event: name }, `bus listener ${how}`);
  const byName = createListeners(failed);
  const bySession = createListeners(failed);
  const everyEvent = createListeners(failed);
  const ANY = Symbol('any');

  const envelope = <N extends string, P>(name: N, payload: P, meta?: SendMeta): Envelope<N, P> => {
    const id = ids();
    const env: Envelope<N, P> = {
      id,
      ts: meta?.ts ?? clock.now(),
      correlationId: meta?.correlationId ?? id,
      name,
      payload,
    };
    const sessionId = sessionOf(payload);
    if (sessionId !== undefined) env.sessionId = sessionId;
    return env;
  };

  return {
    handle(name, handler) {
      if (handlers.has(name)) throw new Error(`command ${name} already has a handler`);
      handlers.set(name, handler as (c: Envelope) => unknown);
      return () => void handlers.delete(name);
    },
    async execute(name, payload, meta) {
      const handler = handlers.get(name);
      if (!handler) throw new AppError('INTERNAL_ERROR', `no handler for command ${name}`);
      return await handler(envelope(name, payload, meta));
    },
    on: (name, listener) => byName.add(name, listener as (e: Envelope) => unknown),
    onSession: (sessionId, listener) => bySession.add(sessionId, listener as (e: Envelope) => unknown),
    onAny: (listener) => everyEvent.add(ANY, listener as (e: Envelope) => unknown),
    emit(name, payload, meta) {
      const env = envelope(name, payload, meta);
      if (env.sessionId !== undefined) bySession.emit(env.sessionId, env);
      byName.emit(name, env);
      everyEvent.emit(ANY, env);
      return env;
    },
    listenerCount: (name) =>
      name === undefined ? byName.count() + bySession.count() + everyEvent.count() : byName.count(name),
  };
}
