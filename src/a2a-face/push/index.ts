/**
 * A2A push notifications (docs/a2a.md, "Push notifications"): tasks' configs on the record store (config-store.ts),
 * notifications as deliveries of the webhooks' durable outbox (deliveries.ts), each request built here
 * (request.ts) and signed with agentd's key (signer.ts), whose JWKS the A2A mount serves. Its reaction to the stored
 * facts (src/agent/react) is apart from the webhooks' (one's failure does not stall the other).
 */
import type { TurnFollower } from '../../agent/index.ts';
import type { Clock } from '../../clock.ts';
import type { AgentConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import { madeOnce } from '../../made-once.ts';
import { egressPolicyOf } from '../../egress/policy.ts';
import type { records } from '../../store/index.ts';
import { sharedSecret, type SecretStore } from '../../store/secret-store.ts';
import type { OutboxStore } from '../../webhooks/outbox-store.ts';
import { createPushConfigStore } from './config-store.ts';
import { createPushDeliveries } from './deliveries.ts';
import { createPushSigner } from '../../auth/notification-signer.ts';

export { isPushDelivery, PUSH_WEBHOOK_PREFIX, type PushDelivery } from './deliveries.ts';
export { buildPushRequest, type OutboundRequest } from './request.ts';

export interface A2aPushDeps {
  config: Pick<AgentConfig, 'name' | 'server' | 'storage' | 'egress'>;
  /** The signing key's seed, and the configs an earlier agentd kept (taken over at start). */
  secrets: SecretStore;
  /** Where the tasks' configs are kept (the sessions' medium). */
  records: records.RecordStore;
  outbox: OutboxStore;
  follower: Pick<TurnFollower, 'steps'>;
  clock: Clock;
  log: Logger;
  /** Told when notifications were added to the outbox (the webhook dispatcher's `wake`). */
  onAdded?: () => void;
}

export function createA2aPush(deps: A2aPushDeps) {
  const policy = egressPolicyOf(deps.config);
  const configs = createPushConfigStore(deps.records, policy, {
    ...{ log: deps.log, now: () => deps.clock.now() },
    maxPerPrincipal: deps.config.server.limits.deliveries.pushConfigsPerPrincipal,
  });
  // One key for every instance of the medium and across restarts (a failed read is retried).
  const signer = madeOnce(async () => createPushSigner(await sharedSecret(deps.secrets, 'a2a-push-signing-seed')));
  const deliveries = createPushDeliveries({
    follower: deps.follower,
    configs,
    outbox: deps.outbox,
    signer,
    issuer: deps.config.name,
    clock: deps.clock,
    ...(deps.onAdded && { onAdded: deps.onAdded }),
  });
  return {
    configs,
    outbox: deps.outbox,
    target: deliveries.target,
    /** Keeps the notifications of each stored fact (its own checkpoint, apart from the webhooks'). */
    reaction: deliveries.reaction,
    jwks: async () => (await signer()).jwks(),
  };
}
export type A2aPush = ReturnType<typeof createA2aPush>;
