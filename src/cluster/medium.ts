/**
 * What the cluster sends through, whatever carries it: Redis pub/sub (redis-medium.ts) or PostgreSQL LISTEN/NOTIFY
 * (postgres-medium.ts). Contracts every medium keeps:
 * - `publish` delivers a message to every subscriber of its channel, this instance's own too; messages a publisher
 *   sends to one channel arrive in the order it sent them. It answers how many connections listened (Redis), or
 *   `undefined` when the medium cannot count them (Postgres): callers then never conclude that nobody listens.
 * - Nothing is kept for a subscriber while its connection is away: `watch` tells `lost` when the subscriptions'
 *   connection broke and `back` once every subscription is in place again, so a caller reads back what it missed.
 * - A failure rejects as an AppError (SERVICE_UNAVAILABLE with the medium's `reason`), never hangs.
 */
export type Listener = (message: string, channel: string) => void;

export interface ClusterMedium {
  /** What health and errors name: `redis` or `postgres`. */
  name: 'redis' | 'postgres';
  /** The `details.reason` of its outages: `redis`, or `storage` on Postgres (the store of record is what is away). */
  reason: 'redis' | 'storage';
  /** Whether `publish` answers how many listened (Redis) rather than `undefined` (Postgres). */
  countsListeners: boolean;
  publish(channel: string, message: string): Promise<number | undefined>;
  subscribe(channel: string, listener: Listener): Promise<void>;
  unsubscribe(channel: string, listener: Listener): Promise<void>;
  /** Whether the subscriptions' connection is up now. */
  isReady(): boolean;
  /** Hears the subscriptions' connection break and come back; returns what stops it. */
  watch(on: { lost(): void; back(): void }): () => void;
  open(): Promise<void>;
  close(): Promise<void>;
}

/** The lease of a session as its backend answers a claim. */
export interface LeaseAnswer {
  holder: string;
  /** Whether this claim took a free lease (a renewal does not). */
  taken: boolean;
  /** The session's fencing token. */
  token: number;
  /** The store-id key held another identity than the claimer's (the store lost data): nothing was taken or renewed. */
  storeChanged?: true;
}

/**
 * Where session leases live (src/cluster/leases.ts states their contract): Redis keys with an expiry, or the session
 * row on PostgreSQL (src/store/postgres/leases.ts). Both judge expiry by the backend's own clock.
 */
export interface LeaseBackend {
  /**
   * Takes a free lease or renews `me`'s for `ms`; `held`: the token `me` holds, kept when nobody took it since.
   * `storeId`: the store identity `me` holds; a backend that keeps it beside the leases (Redis) takes nothing when it
   * changed (`storeChanged`).
   */
  claim(sessionId: string, me: string, ms: number, held: number | undefined, storeId?: string): Promise<LeaseAnswer>;
  /** Gives `me`'s lease (held with `token`) up; no-op when not `me`'s. */
  release(sessionId: string, me: string, token: number): Promise<void>;
  /** The holder of a running lease, or null. */
  holder(sessionId: string): Promise<string | null>;
  /** Whether the backend is reachable now (a fresh lease of one's own is trusted without asking only then). */
  isReady(): boolean;
  /** Until when, after the backend came back from an outage, no free lease this instance did not hold is taken. */
  quietUntil(): number;
  close(): void;
}

/** Runtime tool-server changes and every instance's statuses (tool-servers.ts), in Redis or PostgreSQL. */
export interface ClusterRegistry {
  /** Records a connect or remove (JSON) under the server's name, for instances that join later. */
  recordChange(server: string, json: string): Promise<void>;
  /** Every recorded change (JSON). */
  changes(): Promise<string[]>;
  /**
   * Writes `instanceId`'s statuses (server name → status JSON) and marks it alive; `replace` drops the servers not
   * given (a heartbeat's whole listing) and forgets instances long gone.
   */
  writeStatuses(instanceId: string, fields: Record<string, string>, replace: boolean, leaseMs: number): Promise<void>;
  /** The statuses of every instance heard from within `2 × leaseMs`. */
  liveStatuses(leaseMs: number): Promise<(readonly [string, Record<string, string>])[]>;
}
