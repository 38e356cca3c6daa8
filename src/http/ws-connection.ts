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
  /** Resolved once, at the upgrade. */
  principal: Principal;
  /** Every session id a frame names becomes a key through it (src/auth/ownership.ts). */
  access: SessionAccess;
  /** Keys of the sessions it watches. */
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
  /** How long a reader's backlog may stay before it is closed (1008; slow-readers.ts). */
  slowReaderMs: number;
  ids: () => string;
  follower: Pick<TurnFollower, 'replay' | 'watchInterest' | 'unwatchInterest'>;
  /** Sent first on every connection (`hello`). */
  storeId: () => string;
}

export const sessionTopic = (sessionId: string) => `s:${sessionId}`;
