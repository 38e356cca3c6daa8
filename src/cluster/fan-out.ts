import type { Bus, CommandSpec, Envelope, EventSpec } from '../bus/index.ts';
import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import { readWire, wireEvent, type WireEvent } from './wire.ts';

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
 * Live frames across instances.
 *
 * Contracts:
 * - Every `agent.*` event emitted here, and every `mcp.toolProgress` (a call's progress, for the
 *   session's watchers), is published on its session's channel
 *   `<prefix>{s:<sessionId>}:live`, in the order emitted; while Redis is away it is not (durable
 *   frames stay readable with `since`).
 * - This instance receives a session's channel while something here watches it (`watch` counts
 *   WebSocket subscribers and callers waiting on a turn; `unwatch` uncounts): the events arrive on
 *   the bus with their payload, correlationId, sessionId and time (`ts`), and are not published again.
 *   `watch` resolves once the subscription is in place (or failed: Redis away, logged). A message
 *   that is not a valid event is logged and dropped (wire.ts).
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
      log.warn(
        { err: err instanceof Error ? err.message : String(err), sessionId },
        'cluster: could not subscribe to a session',
      );
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
