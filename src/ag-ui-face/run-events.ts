/** AG-UI events a run sends that depend on no run's view: an error, a tool server's progress, a result's text. */
import { EventType, type Event } from '@ag-ui/core';
import { toAgUiRunError } from '../errors/index.ts';
import type { McpEvents } from '../tools/messages.ts';

/** `RUN_ERROR` with the error table's code. */
export const runError = (err: unknown): Event => ({ type: EventType.RUN_ERROR, ...toAgUiRunError(err) });

/** A tool server's progress on one of the run's calls (not stored: it comes live only). */
export const toolProgress = (p: McpEvents['mcp.toolProgress']): Event => ({
  type: EventType.CUSTOM,
  name: 'agentd.toolProgress',
  value: {
    toolCallId: p.callId,
    serverId: p.serverId,
    toolName: p.toolName,
    progress: p.progress,
    ...(p.total !== undefined && { total: p.total }),
    ...(p.message !== undefined && { message: p.message }),
  },
});

/** A tool's result as the text AG-UI carries: JSON unless it is a string. */
export const resultText = (result: unknown): string =>
  typeof result === 'string' ? result : JSON.stringify(result ?? null);
