/**
 * A2A push notifications as a feature (Feature, src/http/feature-mount.ts): tasks' configs on the record store, the
 * signing key beside the OAuth secrets, and notifications kept by a reaction of their own (its mount) in the webhooks'
 * outbox, whose dispatcher sends them at once. Its port (A2aPush) is what the A2A face serves: the configs and the JWKS.
 */
import type { Feature } from '../../../http/feature-mount.ts';
import type { PushTarget } from '../../../webhooks/index.ts';
import type { OutboxStore } from '../../../webhooks/outbox-store.ts';
import { createA2aPush, type A2aPush, type A2aPushDeps } from '../index.ts';

export type A2aPushGiven = Omit<A2aPushDeps, 'outbox' | 'onAdded'>;

/** What A2A push needs of the webhooks (their WebhooksPort): the outbox, and its dispatcher. */
export interface A2aPushNeeds {
  webhooks: { outbox: OutboxStore; wake(): void; sendPushWith(target: PushTarget): void };
}

export const a2aPushFeature: Feature<'a2a-push', A2aPushGiven, A2aPush, A2aPushNeeds> = {
  name: 'a2a-push',
  needs: ['webhooks'],
  build({ config, secrets, records, follower, clock, log }, { webhooks }) {
    const push = createA2aPush({
      ...{ config, secrets, records, outbox: webhooks.outbox, follower, clock },
      ...{ log: log.child({ component: 'a2a-push' }), onAdded: () => webhooks.wake() },
    });
    webhooks.sendPushWith(push.target);
    return { mount: { name: 'a2a-push', reactions: [push.reaction] }, port: push };
  },
};
