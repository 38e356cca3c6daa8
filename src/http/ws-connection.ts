import type { TurnFollower } from '../agent/index.ts';
import type { AgUiConfig } from '../config/schema.ts';
import type { Metrics } from '../metrics/index.ts';
import type { EndpointDeps } from './admission.ts';
import type { Principal, Principals, SessionAccess } from '../auth/index.ts';
import type { FrontEndBus } from './front-bus.ts';
import type { Limits } from './limits.ts';
import type { EngineSocket } from './engine/index.ts';
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
  /** Called (and forgotten) once the connection drains or closes: a replay waiting for room (ws-client-frames.ts). */
  drainWaiters: Set<() => void>;
}

/** `maxBodyBytes`: the largest frame a client may send (messages are the largest bodies). */
export interface GatewayDeps extends EndpointDeps {
  metrics?: Pick<Metrics, 'rejected' | 'connections' | 'framePublished'>;
  bus: FrontEndBus;
  auth: Principals;
  limits: Limits;
  /** How long a reader's backlog may stay before it is closed (1008; slow-readers.ts). */
  slowReaderMs: number;
  /** Bytes that may wait for one reader when a frame is queued; one that finds more closes it (1008). */
  slowReaderBytes: number;
  ids: () => string;
  follower: Pick<TurnFollower, 'replay' | 'watchInterest' | 'unwatchInterest' | 'replySoFar'>;
  /** Sent first on every connection (`hello`). */
  storeId: () => string;
  /** Who may declare tools the client runs in a `message` frame (`agUi.clientTools`; absent: everyone). */
  clientTools?: AgUiConfig['clientTools'];
}

export const sessionTopic = (sessionId: string) => `s:${sessionId}`;

/** Wakes (and forgets) what waits for the connection to drain (`drainWaiters`): it drained, or closed. */
export function drained(conn: Connection): void {
  const waiting = [...conn.drainWaiters];
  conn.drainWaiters.clear();
  for (const wake of waiting) wake();
}

/**
 * Undefined while the reader has room, else resolves once it drained or closed: a replay sends its next frame only
 * while at most half of `slowReaderBytes` wait for the reader, so a long log is no backlog that closes it.
 */
export function roomFor(
  ws: Pick<EngineSocket<Connection>, 'data' | 'bufferedAmount'>,
  slowReaderBytes: number,
): Promise<void> | undefined {
  const conn = ws.data;
  if (conn.closed || ws.bufferedAmount <= slowReaderBytes / 2) return undefined;
  return new Promise((resolve) => conn.drainWaiters.add(resolve));
}
