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

export interface Bus<C extends CommandSpec, E extends EventSpec> {
  /** The one handler of a command (a second throws); returns its unregistration. */
  handle<N extends keyof C & string>(name: N, handler: CommandHandler<C, N>): () => void;
  /** Resolves with the handler's result or rejects with its error (INTERNAL_ERROR without a handler). */
  execute<N extends keyof C & string>(name: N, payload: C[N]['payload'], meta?: SendMeta): Promise<C[N]['result']>;
  /** Returns the unsubscription. */
  on<N extends keyof E & string>(name: N, listener: EventListener<E, N>): () => void;
  onAny(listener: (event: Envelope<keyof E & string, E[keyof E]>) => unknown): () => void;
  /** A throwing or rejecting listener is logged and never stops the others. */
  emit<N extends keyof E & string>(name: N, payload: E[N], meta?: SendMeta): Envelope<N, E[N]>;
  listenerCount(name: keyof E & string): number;
}

export interface BusDeps {
  log: Logger;
  clock?: Clock;
  ids?: IdSource;
}

const ANY = Symbol('any');

export function createBus<C extends CommandSpec, E extends EventSpec>(deps: BusDeps): Bus<C, E> {
  const clock = deps.clock ?? systemClock;
  const ids = deps.ids ?? createIdSource();
  const handlers = new Map<string, (c: Envelope) => unknown>();
  const emitter = new EventEmitter();

  const envelope = <N extends string, P>(name: N, payload: P, meta?: SendMeta): Envelope<N, P> => {
    const id = ids();
    const env: Envelope<N, P> = {
      id,
      ts: meta?.ts ?? clock.now(),
      correlationId: meta?.correlationId ?? id,
      name,
      payload,
    };
    if (meta?.sessionId !== undefined) env.sessionId = meta.sessionId;
    return env;
  };

  const guard = (name: string | symbol, listener: (e: Envelope) => unknown) => (event: Envelope) => {
    try {
      const out = listener(event);
      if (out instanceof Promise)
        out.catch((err: unknown) => deps.log.error({ err, event: String(name) }, 'bus listener rejected'));
    } catch (err) {
      deps.log.error({ err, event: String(name) }, 'bus listener threw');
    }
  };

  const subscribe = (name: string | symbol, listener: (e: Envelope) => unknown) => {
    const wrapped = guard(name, listener);
    emitter.on(name, wrapped);
    return () => void emitter.off(name, wrapped);
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
    on: (name, listener) => subscribe(name, listener as (e: Envelope) => unknown),
    onAny: (listener) => subscribe(ANY, listener as (e: Envelope) => unknown),
    emit(name, payload, meta) {
      const env = envelope(name, payload, meta);
      emitter.emit(name, env);
      emitter.emit(ANY, env);
      return env;
    },
    listenerCount: (name) => emitter.listenerCount(name),
  };
}
