import type { Bus, CommandSpec, Envelope, EventSpec } from '../bus/index.ts';
import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import { readWire, wireEvent, type WireEvent } from './wire.ts';
import { messageOf } from '../errors/index.ts';

export interface FanOutOptions {
  /** Publishes. */
  client: RedisConnection;
  /** Subscribes (a connection of its own). */
  subscriber: RedisConnection;
  keyPrefix: string;
  instanceId: string;
  bus: Pick<Bus<CommandSpec, EventSpec>, 'onAny' | 'emit'>;
  log: Logger;
}

/**
 * Live frames across instances. Every `agent.*` and `mcp.toolProgress` event emitted here is published, in order,
 * on its session's channel (not while Redis is away: durable frames stay readable with `since`). While watched
 * (`watch`/`unwatch` count), a session's events from other instances are emitted on this bus, not published again;
 * `watch` resolves once subscribed (or the failure is logged).
 */
export function createFanOut(options: FanOutOptions) {
  const { client, subscriber, keyPrefix, instanceId, bus, log } = options;
  const channel = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:live`;
  const watched = new Map<string, { count: number; ready: Promise<void> }>();
  let relaying = false;

  const stopPublishing = bus.onAny((e: Envelope) => {
    if (relaying || !(e.name.startsWith('agent.') || e.name === 'mcp.toolProgress')) return;
    const sessionId = (e.payload as { sessionId?: string }).sessionId ?? e.sessionId;
    if (sessionId === undefined) return;
    const message: WireEvent = {
      from: instanceId,
      name: e.name,
      payload: e.payload,
      correlationId: e.correlationId,
      sessionId,
      ts: e.ts,
    };
    client.publish(channel(sessionId), JSON.stringify(message)).catch(() => undefined); // the connection logs the outage
  });

  /** Emits an event to this instance's listeners only. */
  function emitHere(
    name: string,
    payload: unknown,
    meta: { correlationId: string; sessionId?: string; ts?: number },
  ): void {
    relaying = true;
    try {
      bus.emit(name, payload, meta);
    } finally {
      relaying = false;
    }
  }

  function onMessage(raw: string, on: string): void {
    const event = readWire(wireEvent, raw, on, log);
    if (!event || event.from === instanceId) return;
    const { name, payload, correlationId, sessionId, ts } = event;
    emitHere(name, payload, {
      correlationId,
      ...(sessionId !== undefined && { sessionId }),
      ...(ts !== undefined && { ts }),
    });
  }

  function watch(sessionId: string): Promise<void> {
    const entry = watched.get(sessionId);
    if (entry) {
      entry.count++;
      return entry.ready;
    }
    const ready = subscriber.subscribe(channel(sessionId), onMessage).catch((err: unknown) => {
      log.warn({ err: messageOf(err), sessionId }, 'cluster: could not subscribe to a session');
    });
    watched.set(sessionId, { count: 1, ready });
    return ready;
  }

  function unwatch(sessionId: string): void {
    const entry = watched.get(sessionId);
    if (!entry || --entry.count > 0) return;
    watched.delete(sessionId);
    subscriber.unsubscribe(channel(sessionId), onMessage).catch(() => undefined);
  }

  return { emitHere, watch, unwatch, close: stopPublishing };
}
