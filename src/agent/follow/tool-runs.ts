/**
 * The tools a turn called, read off its facts (`toolCall`, then its `toolResult`): what `message-sync` lists when
 * asked (`include: ["tools"]`). In call order; a call counts as `ok` once its result succeeded (a denied or
 * unapproved call's failed result leaves it false). A fact seen twice changes nothing.
 */
import type { ToolRun } from '../../conversation/records.ts';
import type { SessionStoredEvent } from '../frames.ts';

export function createToolRuns() {
  const runs = new Map<string, ToolRun>();
  return {
    /** Takes in one fact of the turn (any other fact than a tool's is passed over). */
    see: ({ event: e }: SessionStoredEvent): void => {
      if (e.type !== 'toolCall' && e.type !== 'toolResult') return;
      const { callId, toolName: name, serverId: server } = e;
      const run = runs.get(callId) ?? { name, server, ok: false };
      runs.set(callId, e.type === 'toolResult' ? { ...run, ok: e.success } : run);
    },
    /** The calls seen so far, in call order. */
    list: (): ToolRun[] => [...runs.values()],
  };
}
