/**
 * Webhooks as a feature of the service (FeatureMount): their admin routes, outbox, commands and dispatcher, and the
 * reaction that keeps the deliveries of each stored fact.
 */
import type { Bus } from '../../bus/index.ts';
import type { Clock } from '../../clock.ts';
import type { FeatureMount } from '../../http/feature-mount.ts';
import type { WebhookCommands } from '../messages.ts';
import type { WebhookService } from '../service.ts';
import { webhookRoutes } from './routes.ts';

export const webhooksMount = (deps: {
  clock: Clock;
  bus: Pick<Bus<WebhookCommands, never>, 'execute'>;
  webhooks: WebhookService;
}): FeatureMount => ({
  name: 'webhooks',
  routes: () => webhookRoutes(deps),
  open: () => deps.webhooks.open(),
  start: () => deps.webhooks.start(),
  stop: () => deps.webhooks.stop(), // sends nothing more; the sessions' last facts are still kept
  close: () => deps.webhooks.close(), // the outbox, once the sessions closed
  reactions: [deps.webhooks.reaction],
});
