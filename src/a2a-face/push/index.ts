/**
 * A2A push notifications (docs/a2a.md, "Push notifications"): tasks' configs in the secret store (config-store.ts),
 * notifications as deliveries of the webhooks' durable outbox (deliveries.ts), each request built here
 * (request.ts) and signed with agentd's key (signer.ts), whose JWKS the A2A mount serves. The webhook service hears
 * the stored facts through its reaction (src/agent/react) and asks `target.announce` for each.
 */
import type { TurnFollower } from '../../agent/index.ts';
import type { Clock } from '../../clock.ts';
import type { AgentConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import { madeOnce } from '../../made-once.ts';
import { egressPolicyOf } from '../../egress/policy.ts';
import { sharedSecret, type SecretStore } from '../../store/secret-store.ts';
import type { OutboxStore } from '../../webhooks/outbox-store.ts';
import { createRedisIndexChanges } from './changes-redis.ts';
import { createPushConfigStore } from './config-store.ts';
import { createPushDeliveries } from './deliveries.ts';
import { createPushSigner } from '../../auth/notification-signer.ts';

export { isPushDelivery, PUSH_WEBHOOK_PREFIX, type PushDelivery } from './deliveries.ts';
export { buildPushRequest, type OutboundRequest } from './request.ts';

export interface A2aPushDeps {
  config: Pick<AgentConfig, 'name' | 'server' | 'storage' | 'egress'>;
  secrets: SecretStore;
  outbox: OutboxStore;
  follower: Pick<TurnFollower, 'steps'>;
  clock: Clock;
  log: Logger;
  /** Told when notifications were added to the outbox (the webhook dispatcher's `wake`). */
  onAdded?: () => void;
}

export function createA2aPush(deps: A2aPushDeps) {
  const policy = egressPolicyOf(deps.config);
  const { storage } = deps.config;
  // On redis the instances tell each other of config changes, so a task without one reads nothing there either.
  const shared =
    storage.type === 'redis'
      ? createRedisIndexChanges({ url: storage.url, keyPrefix: storage.keyPrefix, log: deps.log })
      : undefined;
  const configs = createPushConfigStore(deps.secrets, policy, shared?.changes, {
    now: () => deps.clock.now(),
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
    jwks: async () => (await signer()).jwks(),
    start(): void {
      shared?.open().catch((err: unknown) => deps.log.warn({ err }, 'a2a push: config changes not heard; reading'));
    },
    async stop(): Promise<void> {
      await shared?.close();
    },
  };
}
export type A2aPush = ReturnType<typeof createA2aPush>;
