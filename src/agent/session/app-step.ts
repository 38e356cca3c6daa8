/**
 * The step of an MCP App's call (TurnMessage `app`, `agent.appToolCall`): what a session's model step answers for it,
 * without asking the model.
 *
 * Contracts:
 * - The step asks for the app's one call, under the call's id, by the tool's catalogue name; the catalogue it was
 *   "offered" is that tool alone, with the tool policy's action. So the turn plans, denies, asks approval for and runs
 *   the call exactly as it would a model's (turn-steps.ts `planCalls`).
 * - Its `model` is APP_STEP_MODEL (the stored `assistantStep` names no model that was asked), with no usage.
 * - A turn resumed from its log has no call to make (`app.call` absent): it is never asked for a step (the turn
 *   machine ends it); asked anyway, the step fails.
 */
import type { AppToolCall, ModelStepOutput } from '../../conversation/turn-contract.ts';
import { AppError } from '../../errors/index.ts';
import type { ToolPolicy } from '../questions/tool-policy.ts';

/** The `model` of an app's step. */
export const APP_STEP_MODEL = 'app';

export function appStep(app: AppToolCall, policy: ToolPolicy | undefined, at: number): ModelStepOutput {
  const call = app.call;
  if (!call)
    throw new AppError('AGENT_ERROR', "An app's call taken up from the log has no step to run", {
      reason: 'interrupted',
    });
  const { tool, callId, args } = call;
  const action = policy?.(tool.serverId, tool.toolName);
  return {
    step: {
      text: '',
      toolCalls: [{ id: callId, name: tool.name, arguments: JSON.stringify(args) }],
      finishReason: 'tool_calls',
      model: APP_STEP_MODEL,
    },
    tools: [{ ...tool, ...(action && { action }) }],
    at,
  };
}
