import type { Bus, CommandSpec, Envelope, EventSpec, SendMeta } from '../bus/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import type { ClusterShared } from './shared.ts';
import { readWire, watchNotice, wireEvent, type WatchNotice, type WireEvent } from './wire.ts';
import { messageOf } from '../errors/index.ts';
import { createGapRepair, type StoredFact } from './gap-repair.ts';

export interface FanOutOptions extends Pick<ClusterShared, 'client' | 'keyPrefix' | 'instanceId' | 'log'> {
  /** Subscribes (a connection of its own). */
  subscriber: RedisConnection;
  /** The instance holding a session's lease (null: none). */
  holder: (sessionId: string) => Promise<string | null>;
  bus: Pick<Bus<CommandSpec, EventSpec>, 'onAny' | 'emit'>;
  /** A session's stored facts after seq `since` (the event store): what fills a gap in a watched session's facts. */
  readFacts?: (sessionId: string, since: number) => Promise<readonly StoredFact[]>;
  /** A session's last seq (0: none): where a new watch measures gaps from. */
  lastSeq?: (sessionId: string) => Promise<number>;
  /**
   * The event a new watcher of a session held here hears first, read when its notice comes: the state of the
   * session's transient frames it would otherwise lack (the reply its turn streamed so far, src/agent/follow/
   * reply-so-far.ts), which the watcher's own fold takes as it comes, in order with the session's relayed events.
   */
  seedOf?: (sessionId: string) => { name: string; payload: unknown };
}

/** The bus event of a stored fact (src/agent `STORED_EVENT`): numbered by seq, readable again from the store. */
const FACT = 'agent.stored';

/** How long a watch waits for the holder's acknowledgement before it asks again, and how often it asks. */
const ACK_MS = 1000;
const ASKS = 3;
/** The holder's acknowledgement on a session's channel: it publishes the session's frames from then on. */
const PUBLISHING = 'cluster.publishing';

/** The holder's answer to a watch notice: it publishes the session's frames from now on. */
function publishingAck(instanceId: string, notice: WatchNotice): WireEvent {
  return { from: instanceId, name: PUBLISHING, correlationId: notice.nonce, sessionId: notice.sessionId };
}

/**
 * Waits for the acknowledgement `nonce` (true) or `ACK_MS` (false); `stop` forgets the wait (call it once done).
 */
function listenForAck(acks: Map<string, () => void>, nonce: string) {
  let timer: NodeJS.Timeout | undefined;
  const acknowledged = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ACK_MS).unref();
    acks.set(nonce, () => resolve(true));
  });
  const stop = () => {
    clearTimeout(timer);
    acks.delete(nonce);
  };
  return { acknowledged, stop };
}

/** The watch notice's sender: asks a session's holder to publish its frames (see `createFanOut`). */
function announcer(
  { client, instanceId, log, holder }: Pick<FanOutOptions, 'client' | 'instanceId' | 'log' | 'holder'>,
  noticeChannel: (instance: string) => string,
  acks: Map<string, () => void>,
) {
  let asked = 0;
  /** Asks the session's holder to publish its frames; resolves once it acknowledged, or there is no one to ask. */
  return async function announce(sessionId: string): Promise<void> {
    for (let ask = 1; ask <= ASKS; ask++) {
      const owner = await holder(sessionId);
      if (owner === null || owner === instanceId) return;
      const nonce = `${instanceId}:${++asked}`;
      // Listening before asking: the acknowledgement may come before the PUBLISH's own answer.
      const { acknowledged, stop } = listenForAck(acks, nonce);
      try {
        const notice: WatchNotice = { sessionId, nonce };
        const receivers = await client.publish(noticeChannel(owner), JSON.stringify(notice));
        if (receivers === 0 || (await acknowledged)) return; // nobody listens there: the holder is gone
      } finally {
        stop();
      }
    }
    log.warn({ sessionId }, 'cluster: the holder of a watched session did not acknowledge; its frames may not come');
  };
}

/**
 * Live frames across instances. Every `agent.*` and `mcp.toolProgress` event emitted here is published, in order,
 * on its session's channel while another instance may watch it (not while Redis is away: durable frames stay
 * readable with `since`). A session's publishing stops when a PUBLISH reached nobody (this instance's own
 * subscription aside: it skips its own frames) and no watch notice came meanwhile; it starts again on a notice and
 * when this instance takes the session's lease (`taken`).
 * While watched (`watch`/`unwatch` count), a session's events from other instances are emitted on this bus, not
 * published again. `watch` resolves once subscribed and once the session's holder acknowledged that it publishes
 * (at once when no other instance holds it; a failure is logged): from then on no frame of the session is missed.
 * With `readFacts`, a watched session's facts are emitted without gaps or repeats (gap-repair.ts): a gap pub/sub left
 * (a Redis restart) is read back from the store, and a reconnect reads what came while the subscription was away.
 */
export function createFanOut(options: FanOutOptions) {
  const { client, subscriber, keyPrefix, instanceId, bus, log } = options;
  const channel = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:live`;
  const noticeChannel = (instance: string) => `${keyPrefix}inst:${instance}:watch`;
  /** How this instance's own messages begin (`from` comes first): they come back unread. */
  const ownPrefix = `{"from":${JSON.stringify(instanceId)},`;
  const watched = new Map<string, { count: number; ready: Promise<void> }>();
  /** Sessions whose last PUBLISH reached nobody but this instance. */
  const quiet = new Set<string>();
  /** Sessions whose channel Redis has confirmed this instance subscribed to (and no UNSUBSCRIBE was sent since). */
  const subscribed = new Set<string>();
  /** Notices heard (of any session): a PUBLISH that reached nobody makes its session quiet only if none came since. */
  let notices = 0;
  const acks = new Map<string, () => void>();
  const announce = announcer(options, noticeChannel, acks);
  let relaying = false;
  const gaps = options.readFacts && createGapRepair({ factName: FACT, read: options.readFacts, emit: emitHere, log });

  const publish = (sessionId: string, message: WireEvent): void => {
    const heard = notices;
    const own = subscribed.has(sessionId) ? 1 : 0; // this instance, counted by Redis too: it skips its own frames
    client.publish(channel(sessionId), JSON.stringify(message)).then(
      (receivers) => receivers <= own && heard === notices && quiet.add(sessionId),
      () => undefined, // the connection logs the outage
    );
  };
  const stopPublishing = bus.onAny((e: Envelope) => {
    if (relaying || !(e.name.startsWith('agent.') || e.name === 'mcp.toolProgress')) return;
    const { sessionId } = e;
    if (sessionId === undefined) return;
    if (e.name === FACT) gaps?.heard(sessionId, (e.payload as StoredFact).seq);
    if (quiet.has(sessionId)) return;
    const { name, payload, correlationId, ts } = e;
    publish(sessionId, { from: instanceId, name, payload, correlationId, sessionId, ts });
  });

  /** Publishes the session's frames again (a notice, a lease taken). */
  function speak(sessionId: string): void {
    notices++;
    quiet.delete(sessionId);
  }

  /** Emits an event to this instance's listeners only. */
  function emitHere(name: string, payload: unknown, meta: SendMeta & { correlationId: string }): void {
    relaying = true;
    try {
      bus.emit(name, payload, meta);
    } finally {
      relaying = false;
    }
  }

  function onMessage(raw: string, on: string): void {
    if (raw.startsWith(ownPrefix)) return;
    const event = readWire(wireEvent, raw, on, log);
    if (!event || event.from === instanceId) return;
    const { name, payload, correlationId, ts } = event;
    if (name === PUBLISHING) return acks.get(correlationId)?.();
    const meta = { correlationId, ...(ts !== undefined && { ts }) };
    if (gaps && event.sessionId !== undefined) gaps.relay(event.sessionId, name, payload, meta);
    else emitHere(name, payload, meta);
  }

  /**
   * A watcher's notice: publish the session's events from now on, the seed first, then the acknowledgement. The seed
   * is read here, between two bus events, and every event emitted after it is published after it on the same
   * connection (in order on the channel): the watcher's fold, replaced by the seed, then takes exactly the events the
   * seed does not hold (none lost, none twice), and its watch resolves (the ack) only after the seed.
   */
  function onNotice(raw: string, on: string): void {
    const notice = readWire(watchNotice, raw, on, log);
    if (!notice) return;
    const { sessionId, nonce } = notice;
    speak(sessionId);
    const seed = options.seedOf?.(sessionId);
    if (seed)
      publish(sessionId, { from: instanceId, name: seed.name, payload: seed.payload, correlationId: nonce, sessionId });
    const ack = JSON.stringify(publishingAck(instanceId, notice));
    client.publish(channel(sessionId), ack).catch(() => undefined);
  }

  function watch(sessionId: string): Promise<void> {
    const entry = watched.get(sessionId);
    if (entry) {
      entry.count++;
      return entry.ready;
    }
    const ready = subscriber
      .subscribe(channel(sessionId), onMessage)
      .then(async () => {
        if (watched.get(sessionId)?.ready === ready) subscribed.add(sessionId);
        const last = gaps && options.lastSeq?.(sessionId).catch(() => 0);
        await announce(sessionId);
        if (last) gaps?.known(sessionId, await last);
      })
      .catch((err: unknown) => {
        log.warn({ err: messageOf(err), sessionId }, 'cluster: could not subscribe to a session');
      });
    watched.set(sessionId, { count: 1, ready });
    return ready;
  }

  function unwatch(sessionId: string): void {
    const entry = watched.get(sessionId);
    if (!entry || --entry.count > 0) return;
    watched.delete(sessionId);
    subscribed.delete(sessionId);
    gaps?.forget(sessionId);
    subscriber.unsubscribe(channel(sessionId), onMessage).catch(() => undefined);
  }

  // Back from an outage: every session speaks again, and every watched one is announced again (its holder may
  // have gone quiet while this instance's subscriptions were away).
  const reconnected = () => {
    quiet.clear();
    notices++;
    for (const sessionId of watched.keys()) {
      announce(sessionId).catch(() => undefined);
      gaps?.reread(sessionId);
    }
  };
  const lost = () => subscribed.clear(); // Redis no longer counts this instance's subscriptions
  subscriber.on('ready', reconnected);
  subscriber.on('error', lost);

  return {
    emitHere,
    watch,
    unwatch,
    /** Subscribes to this instance's watch notices. */
    open: () => subscriber.subscribe(noticeChannel(instanceId), onNotice),
    /**
     * This instance took the session's lease: its frames are published (someone may have watched it meanwhile), and
     * what it missed of the session is read first (gap-repair.ts `catchUp`).
     */
    taken: async (sessionId: string): Promise<void> => {
      speak(sessionId);
      await gaps?.catchUp(sessionId);
    },
    /** The session left this instance. */
    forget: (sessionId: string) => void quiet.delete(sessionId),
    close: () => {
      stopPublishing();
      subscriber.off('ready', reconnected);
      subscriber.off('error', lost);
    },
  };
}
