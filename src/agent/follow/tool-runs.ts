/**
 * The tools a turn called, read off its frames (`toolCall`, then its `toolResult`): what `message-sync` lists when
 * asked (`include: ["tools"]`). In call order; a call counts as `ok` once its result succeeded (a denied or
 * unapproved call's failed result leaves it false). A frame seen twice changes nothing.
 */
import type { ToolRun } from '../../conversation/records.ts';
import type { AgentFrame } from '../frames.ts';

export function createToolRuns() {
  const runs = new Map<string, ToolRun>();
  return {
    /** Takes in one frame of the turn (any other frame than a tool's is passed over). */
    see: (frame: AgentFrame): void => {
      if (frame.event !== 'toolCall' && frame.event !== 'toolResult') return;
      const { callId, toolName: name, serverId: server } = frame.data;
      const run = runs.get(callId) ?? { name, server, ok: false };
      runs.set(callId, frame.event === 'toolResult' ? { ...run, ok: frame.data.success } : run);
    },
    /** The calls seen so far, in call order. */
    list: (): ToolRun[] => [...runs.values()],
  };
}
