import type { Bus, CommandSpec, Envelope, EventSpec, SendMeta } from '../bus/index.ts';
import type { ClusterShared } from './shared.ts';
import { readWire, watchNotice, wireEvent, type WatchNotice, type WireEvent } from './wire.ts';
import { messageOf } from '../errors/index.ts';
import { createGapRepair, type StoredFact } from './gap-repair.ts';
import type { ClusterMedium } from './medium.ts';
import { RENEW_MS, speakers } from './speakers.ts';

export interface FanOutOptions extends Pick<ClusterShared, 'keyPrefix' | 'instanceId' | 'log' | 'clock'> {
  /** What the frames travel through (Redis pub/sub, or Postgres LISTEN/NOTIFY): `live` in createCluster. */
  medium: ClusterMedium;
  /**
   * Stored facts travel as their seq alone, and watchers read them from the store (Postgres: a NOTIFY payload is
   * small, and the rows are the truth). Needs `readFacts`.
   */
  factsByReference?: boolean;
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
  { medium, instanceId, log, holder }: Pick<FanOutOptions, 'medium' | 'instanceId' | 'log' | 'holder'>,
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
        const receivers = await medium.publish(noticeChannel(owner), JSON.stringify(notice));
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
 * on its session's channel while another instance may watch it (not while the medium is away: durable frames stay
 * readable with `since`); `speakers` says when a session goes quiet and speaks again. With `factsByReference` a stored
 * fact is published as its seq, and a watcher reads it from the store (gap-repair.ts), in order with the rest.
 * While watched (`watch`/`unwatch` count), a session's events from other instances are emitted on this bus, not
 * published again. `watch` resolves once subscribed and once the session's holder acknowledged that it publishes
 * (at once when no other instance holds it; a failure is logged): from then on no frame of the session is missed.
 * With `readFacts`, a watched session's facts are emitted without gaps or repeats (gap-repair.ts): a gap pub/sub left
 * (a restart of the medium) is read back from the store, and a reconnect reads what came while the subscription was away.
 */
export function createFanOut(options: FanOutOptions) {
  const { medium, keyPrefix, instanceId, bus, log } = options;
  const channel = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:live`;
  const noticeChannel = (instance: string) => `${keyPrefix}inst:${instance}:watch`;
  /** How this instance's own messages begin (`from` comes first): they come back unread. */
  const ownPrefix = `{"from":${JSON.stringify(instanceId)},`;
  const watched = new Map<string, { count: number; ready: Promise<void> }>();
  const speaking = speakers(medium.countsListeners, options.clock);
  /** Sessions whose channel the medium has confirmed this instance subscribed to (and no unsubscribe was sent since). */
  const subscribed = new Set<string>();
  const acks = new Map<string, () => void>();
  const announce = announcer(options, noticeChannel, acks);
  let relaying = false;
  const gaps = options.readFacts && createGapRepair({ factName: FACT, read: options.readFacts, emit: emitHere, log });
  const byReference = options.factsByReference === true && gaps !== undefined;

  const publish = (sessionId: string, message: WireEvent): void => {
    const heard = speaking.sent();
    const own = subscribed.has(sessionId) ? 1 : 0; // this instance, counted by Redis too: it skips its own frames
    medium.publish(channel(sessionId), JSON.stringify(message)).then(
      (receivers) => speaking.reached(sessionId, receivers, own, heard),
      () => undefined, // the connection logs the outage
    );
  };
  const stopPublishing = bus.onAny((e: Envelope) => {
    if (relaying || !(e.name.startsWith('agent.') || e.name === 'mcp.toolProgress')) return;
    const { sessionId } = e;
    if (sessionId === undefined) return;
    const fact = e.name === FACT ? (e.payload as StoredFact) : undefined;
    if (fact) gaps?.heard(sessionId, fact.seq);
    if (!speaking.speaks(sessionId)) return;
    const { name, correlationId, ts } = e;
    const payload = fact && byReference ? { seq: fact.seq } : e.payload;
    const ref = fact && byReference ? { ref: true as const } : {};
    publish(sessionId, { from: instanceId, name, payload, correlationId, sessionId, ts, ...ref });
  });

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
    const { name, payload, correlationId, ts, sessionId } = event;
    if (name === PUBLISHING) return acks.get(correlationId)?.();
    const meta = { correlationId, ...(ts !== undefined && { ts }) };
    if (event.ref && gaps && sessionId !== undefined) gaps.relayRef(sessionId, (payload as { seq: number }).seq);
    else if (gaps && sessionId !== undefined) gaps.relay(sessionId, name, payload, meta);
    else emitHere(name, payload, meta);
  }

  /**
   * A watcher's notice: publish the session's events from now on, the seed first, then the acknowledgement (a renewal
   * has neither). The seed is read here, between two bus events, and every event emitted after it is published after
   * it on the same connection (in order on the channel): the watcher's fold, replaced by the seed, then takes exactly
   * the events the seed does not hold (none lost, none twice), and its watch resolves (the ack) only after the seed.
   */
  function onNotice(raw: string, on: string): void {
    const notice = readWire(watchNotice, raw, on, log);
    if (!notice) return;
    const { sessionId, nonce } = notice;
    speaking.speak(sessionId);
    if (notice.renew) return;
    const seed = options.seedOf?.(sessionId);
    if (seed)
      publish(sessionId, { from: instanceId, name: seed.name, payload: seed.payload, correlationId: nonce, sessionId });
    const ack = JSON.stringify(publishingAck(instanceId, notice));
    medium.publish(channel(sessionId), ack).catch(() => undefined);
  }

  function watch(sessionId: string): Promise<void> {
    const entry = watched.get(sessionId);
    if (entry) {
      entry.count++;
      return entry.ready;
    }
    const ready = medium
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
    medium.unsubscribe(channel(sessionId), onMessage).catch(() => undefined);
  }

  // Back from an outage: every session speaks again, and every watched one is announced again (its holder may
  // have gone quiet while this instance's subscriptions were away), and what was stored meanwhile is read.
  const back = () => {
    speaking.reset();
    for (const sessionId of watched.keys())
      void announce(sessionId)
        .catch(() => undefined)
        .then(() => gaps?.reread(sessionId));
  };
  const stopWatching = medium.watch({ lost: () => subscribed.clear(), back }); // lost: nothing counts us any more
  const renewer = medium.countsListeners ? undefined : renewNotices(options, watched, noticeChannel);

  return {
    emitHere,
    watch,
    unwatch,
    /** Subscribes to this instance's watch notices. */
    open: () => medium.subscribe(noticeChannel(instanceId), onNotice),
    /**
     * This instance took the session's lease: its frames are published (someone may have watched it meanwhile), and
     * what it missed of the session is read first (gap-repair.ts `catchUp`).
     */
    taken: async (sessionId: string): Promise<void> => {
      speaking.speak(sessionId);
      await gaps?.catchUp(sessionId);
    },
    /** The session left this instance. */
    forget: (sessionId: string) => speaking.forget(sessionId),
    close: () => {
      stopPublishing();
      stopWatching();
      clearInterval(renewer);
    },
  };
}

/** On a medium that cannot count listeners: every `RENEW_MS`, each watched session's holder hears it is still watched. */
function renewNotices(
  { medium, instanceId, holder }: Pick<FanOutOptions, 'medium' | 'instanceId' | 'holder'>,
  watched: ReadonlyMap<string, unknown>,
  noticeChannel: (instance: string) => string,
): NodeJS.Timeout {
  let renewals = 0;
  const renew = async (sessionId: string) => {
    const owner = await holder(sessionId);
    if (owner === null || owner === instanceId) return;
    const notice: WatchNotice = { sessionId, nonce: `${instanceId}:r${++renewals}`, renew: true };
    await medium.publish(noticeChannel(owner), JSON.stringify(notice));
  };
  const timer = setInterval(() => {
    for (const sessionId of watched.keys()) renew(sessionId).catch(() => undefined); // away: the next one renews
  }, RENEW_MS);
  timer.unref();
  return timer;
}
