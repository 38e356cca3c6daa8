/** What the A2A face is given (its deps), what each call carries (its context) and what it answers. */
import type { AgentCommands, AgentEvents, TurnFollower } from '../agent/index.ts';
import type { Principal, SessionAccess } from '../auth/index.ts';
import type { Bus } from '../bus/index.ts';
import type { IdSource } from '../clock.ts';
import type { toA2aRpc } from '../errors/index.ts';
import type { A2aVersion } from './wire.ts';

export interface A2aFaceDeps {
  bus: Pick<Bus<AgentCommands, AgentEvents>, 'execute'>;
  follower: TurnFollower;
  ids: IdSource;
  maxHops: number;
  /** How long a blocking `SendMessage` waits for the task to settle. */
  waitMs: number;
  /** Whether a principal may answer approvals (the `approve` route scope of server.auth). */
  mayApprove: (principal: Principal) => boolean;
  /** The card for `GetExtendedAgentCard`, given the origin the caller reached us at. */
  card: (origin: string) => object;
  /** Where tasks' push notification configs are kept (push-config.ts); absent: PushNotificationNotSupported. */
  push?: A2aPushConfigs | undefined;
}

/** A task's push notification config as kept: what the caller gave, and the wire version it was given in. */
export interface PushConfig {
  id: string;
  url: string;
  /** Sent back as `X-A2A-Notification-Token`. */
  token?: string;
  /** `Authorization: <scheme> <credentials>` on each notification, when both are given. */
  authentication?: { scheme: string; credentials?: string };
  /** The version it was set in: notifications speak it. */
  version: A2aVersion;
  /** When it was kept (epoch ms; the store sets it): facts stored before are not notified to it. */
  setAt?: number;
}

/**
 * The push configs of tasks, by the task's session key and turn (the caller's own: the face checks the task first).
 * Durable on the sessions' medium; `set` replaces a config of the same id.
 */
export interface A2aPushConfigs {
  /** Throws INVALID_REQUEST naming `details.field` for a URL the URL policy refuses. */
  checkUrl(url: string, field: string): void;
  /**
   * Keeps `config` on the task. RATE_LIMIT_EXCEEDED when it is new, the task is not `finished`, and the task's owner
   * holds `server.limits.deliveries.pushConfigsPerPrincipal` configs on tasks not finished.
   */
  set(sessionKey: string, turnId: string, config: PushConfig, options?: { finished?: boolean }): Promise<void>;
  list(sessionKey: string, turnId: string): Promise<PushConfig[]>;
  /** False when there was none of that id. */
  delete(sessionKey: string, turnId: string, id: string): Promise<boolean>;
}

export interface A2aCallContext {
  version: A2aVersion;
  sessions: SessionAccess;
  principal: Principal;
  signal: AbortSignal;
  /** How the caller reached us (`endpointOrigin`), for the card. */
  origin: string;
}

export type RpcId = string | number | null;
export type RpcResult = { jsonrpc: '2.0'; id: RpcId; result: unknown };
export type Answer<T> = { kind: 'json'; body: T } | { kind: 'stream'; events: AsyncIterable<T> };
export type A2aAnswer = Answer<RpcResult | { jsonrpc: '2.0'; id: RpcId; error: ReturnType<typeof toA2aRpc> }>;
/** A method's answer before errors are encoded: its result, or the results of its stream. */
export type A2aResults = Answer<RpcResult>;
