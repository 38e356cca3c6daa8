/** A WebSocket connection of the gateway (ws-gateway.ts), what the gateway is built from, and session topics. */
import type { TurnFollower } from '../agent/index.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { Admission } from './admission.ts';
import type { Principal, Principals, SessionAccess } from './auth.ts';
import type { FrontEndBus } from './front-bus.ts';
import type { ClientIp } from './ip.ts';
import type { Limits } from './limits.ts';
import type { SessionsOf } from './route.ts';

export interface Connection {
  id: string;
  ip: string;
  closed: boolean;
  /** Who the connection acts for, resolved once at the upgrade (header or `?token=`). */
  principal: Principal;
  /** The sessions its principal reaches: every id a frame names becomes a key through it (src/auth/ownership.ts). */
  access: SessionAccess;
  /** Keys of the sessions whose frames it receives (besides server-wide events). */
  sessions: Set<string>;
}

export interface GatewayDeps {
  metrics?: Pick<Metrics, 'rejected' | 'connections' | 'framePublished'>;
  bus: FrontEndBus;
  log: Logger;
  clock: Clock;
  admission: Admission;
  clientIp: ClientIp;
  auth: Principals;
  sessionsOf: SessionsOf;
  limits: Limits;
  maxPayloadBytes: number;
  /** How long a reader may leave its buffer full before it is closed (1008). */
  slowReaderMs: number;
  ids: () => string;
  /**
   * Reads a session's stored frames from a seq (`subscribe`'s replay) and asks for its frames from other
   * instances while a connection watches it (src/agent/follow: the seam every face follows turns through).
   */
  follower: Pick<TurnFollower, 'replay' | 'watchInterest' | 'unwatchInterest'>;
  /** The store's identity, sent first on every connection (`hello`); known before the service listens. */
  storeId: () => string;
}

/** Topic of a session's events; every connection is on `default` and on `ALL` (server-wide events). */
export const sessionTopic = (sessionId: string) => `s:${sessionId}`;
