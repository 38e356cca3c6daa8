/** The features' mounts as createApp lists them, with deps that only have to exist (for route tables, not calls). */
import type { FeatureMount } from '../../src/http/feature-mount.ts';
import { memoryMount } from '../../src/memory/feature/mount.ts';
import { schedulesMount } from '../../src/schedules/feature/mount.ts';
import { webhooksMount } from '../../src/webhooks/feature/mount.ts';
import { usageMount } from '../../src/spend/feature/mount.ts';

const any = {} as never;
export const tableFeatures = (): FeatureMount[] => [
  schedulesMount({ scheduler: any, store: any, clock: any, configured: () => [], fires: false }),
  memoryMount({ clock: any, memory: undefined }),
  webhooksMount({ clock: any, bus: any, webhooks: any }),
  usageMount({ clock: any, ledger: any }),
];
