import type { TurnFollower } from '../agent/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { EndpointDeps } from './admission.ts';
import type { Principal, Principals, SessionAccess } from '../auth/index.ts';
import type { FrontEndBus } from './front-bus.ts';
import type { Limits } from './limits.ts';
import type { Seam } from './ws-seam.ts';

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
  /** The sessions whose `subscribe{since}` is between its replay and the topic (ws-seam.ts), by key. */
  seams: Map<string, Seam>;
}

/** `maxBodyBytes`: the largest frame a client may send (messages are the largest bodies). */
export interface GatewayDeps extends EndpointDeps {
  metrics?: Pick<Metrics, 'rejected' | 'connections' | 'framePublished'>;
  bus: FrontEndBus;
  auth: Principals;
  limits: Limits;
  /** How long a reader's backlog may stay before it is closed (1008; slow-readers.ts). */
  slowReaderMs: number;
  ids: () => string;
  follower: Pick<TurnFollower, 'replay' | 'watchInterest' | 'unwatchInterest'>;
  /** Sent first on every connection (`hello`). */
  storeId: () => string;
}

export const sessionTopic = (sessionId: string) => `s:${sessionId}`;
