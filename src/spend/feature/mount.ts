/** The usage report as a feature of the service (FeatureMount): its REST route over the spend ledger. */
import type { FeatureMount } from '../../http/feature-mount.ts';
import { usageRoutes, type UsageRoutesDeps } from './routes.ts';

export const usageMount = (deps: UsageRoutesDeps): FeatureMount => ({
  name: 'usage',
  routes: () => usageRoutes(deps),
});
