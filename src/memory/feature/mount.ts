/** Memory as a feature of the service (FeatureMount): its REST routes (the agent uses the memory service itself). */
import type { Clock } from '../../clock.ts';
import type { FeatureMount } from '../../http/feature-mount.ts';
import type { MemoryService } from '../types.ts';
import { memoryRoutes } from './routes.ts';

/** `memory` absent: memory is off, and its routes say so. */
export const memoryMount = (deps: { clock: Clock; memory: MemoryService | undefined }): FeatureMount => ({
  name: 'memory',
  routes: () => memoryRoutes(deps),
});
