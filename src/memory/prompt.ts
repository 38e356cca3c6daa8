/**
 * Working memory in the system prompt (issue 62): each new turn's system prompt ends with the owner's profile, in a
 * marked section, when it is not empty. Being part of the system prompt, a compaction never drops it (the summary
 * replaces history, never the system message).
 *
 * Contracts:
 * - `workingMemory(owner)` resolves to '' (nothing added) for an empty profile, and never rejects: a profile that
 *   cannot be read is '' for this turn, warned once per failure streak.
 */
import type { Logger } from '../log/index.ts';
import type { MemoryService } from './types.ts';

/** The marked section for `profile` (appended to the configured system prompt). */
export const workingMemorySection = (profile: string): string =>
  profile.trim() === ''
    ? ''
    : `\n\n<working-memory>\nWhat you remember about the user you are talking with, from earlier conversations:\n${profile.trim()}\n</working-memory>`;

/** The section to append to `owner`'s next turn's system prompt ('' when there is none). */
export function createWorkingMemory(service: Pick<MemoryService, 'profile'>, log: Logger) {
  let failing = false;
  return async (owner: string): Promise<string> => {
    try {
      const section = workingMemorySection(await service.profile(owner));
      failing = false;
      return section;
    } catch (err) {
      if (!failing) log.warn({ err }, 'working memory unavailable; turns go on without it');
      failing = true;
      return '';
    }
  };
}
