/**
 * How a session reaches the agent's tools over the bus: the catalogue the model sees, and calls.
 * Neither throws: an unavailable catalogue is no tools (warned once), a failed call a failed outcome.
 * A call run as a remote task tells the host once the task exists; a call given `input.task` (a task recorded before,
 * e.g. by a turn resumed after a restart) polls that task instead of calling the tool (mcp/task-call.ts).
 */
import type { Clock } from '../clock.ts';
import type { ToolCallInput } from '../conversation/turn-contract.ts';
import { failedOutcome, toTurnError } from '../conversation/turn-steps.ts';
import type { ModelTool, ModelToolOutcome } from '../tools/messages.ts';
import type { AgentBus } from './command-handlers.ts';
import { createSampler, type SamplerDeps } from './questions/sampling.ts';
import type { CallHost } from './questions/call-host.ts';

export interface ToolPortDeps extends SamplerDeps {
  bus: AgentBus;
  clock: Clock;
}

export function createToolPort({ bus, llm, log, clock, maxOutputTokens }: ToolPortDeps) {
  let toolsWarned = false;

  const listTools = async (): Promise<ModelTool[]> => {
    try {
      return await bus.execute('mcp.modelTools', {});
    } catch (err) {
      if (!toolsWarned) log.warn({ err }, 'tool catalogue unavailable; the model gets no tools');
      toolsWarned = true;
      return [];
    }
  };

  const callTool = async (input: ToolCallInput, signal: AbortSignal, host?: CallHost): Promise<ModelToolOutcome> => {
    const started = clock.now();
    try {
      const progress = { sessionId: input.key.sessionId, turnId: input.key.turnId, callId: input.callId };
      const elicit = host && { sessionId: input.key.sessionId, elicit: host.elicit };
      const sampler =
        host && createSampler({ llm, maxOutputTokens, log }, { ...progress, signal, host: host.sampling });
      const task = { ...(host && { created: host.taskCreated }), ...(input.task && { resume: input.task }) };
      return await bus.execute('mcp.callModelTool', {
        sessionId: input.key.sessionId,
        name: input.name,
        args: input.args,
        signal,
        hops: input.key.hops + 1,
        progress,
        ...(sampler && { sampler }),
        ...(elicit && { elicit }),
        task,
      });
    } catch (err) {
      const call = { name: input.name, toolName: input.name, serverId: '' };
      return failedOutcome(call, toTurnError(err).message, clock.now() - started);
    }
  };

  return { listTools, callTool };
}
