/**
 * How a session reaches the agent's tools over the bus: the catalogue the model sees, and calls.
 * Neither throws: an unavailable catalogue is no tools (warned once), a failed call a failed outcome.
 * A call run as a remote task tells the host once the task exists; a call given `input.task` (a task recorded before,
 * e.g. by a turn resumed after a restart) polls that task instead of calling the tool (mcp/task-call.ts).
 * With memory on, the memory tools (the MemoryPort, memory-port.ts) follow the servers' (a server's tool of the same
 * name is left out) and run through the port, for the owner of the calling session; their results are capped like any
 * tool's.
 */
import type { Clock } from '../clock.ts';
import type { ToolCallInput } from '../conversation/turn-contract.ts';
import { failedOutcome, toTurnError } from '../conversation/turn-steps.ts';
import { capText } from '../conversation/tool-shapes.ts';
import { splitSessionKey } from '../session-id.ts';
import type { ModelTool, ModelToolOutcome } from '../tools/messages.ts';
import type { AgentBus } from './command-handlers.ts';
import type { MemoryPort } from './memory-port.ts';
import { createSampler, type SamplerDeps } from './questions/sampling.ts';
import type { CallHost } from './questions/call-host.ts';

export interface ToolPortDeps extends SamplerDeps {
  bus: AgentBus;
  clock: Clock;
  /** Memory (memory on), and the cap of its tools' results (`toolResultMaxBytes`). */
  memory?: { port: MemoryPort; maxResultBytes: number };
}

export function createToolPort({ bus, llm, log, clock, maxOutputTokens, memory }: ToolPortDeps) {
  let toolsWarned = false;
  const memoryTools = memory?.port.tools ?? [];
  const memoryByName = new Map(memoryTools.map((t) => [t.name, t]));

  const serverTools = async (): Promise<ModelTool[]> => {
    try {
      return await bus.execute('mcp.modelTools', {});
    } catch (err) {
      if (!toolsWarned) log.warn({ err }, 'tool catalogue unavailable; the model gets no tools');
      toolsWarned = true;
      return [];
    }
  };
  let shadowWarned = false;
  /** The servers' tools, but one named like a memory tool (warned once: rename the memory tool in `memory.tools`). */
  const besideMemory = (tools: ModelTool[]): ModelTool[] => {
    const kept = tools.filter((t) => !memoryByName.has(t.name));
    if (kept.length < tools.length && !shadowWarned) {
      shadowWarned = true;
      const hidden = tools.filter((t) => memoryByName.has(t.name)).map((t) => `${t.serverId}/${t.toolName}`);
      log.warn({ hidden }, 'tools named like a memory tool are not offered to the model (rename it in memory.tools)');
    }
    return kept;
  };
  const listTools =
    memoryTools.length === 0 ? serverTools : async () => [...besideMemory(await serverTools()), ...memoryTools];

  /** A memory tool's call, for the owner of the calling session (where it was made is kept on what it writes). */
  const callMemory = async (
    { port, maxResultBytes }: NonNullable<ToolPortDeps['memory']>,
    tool: ModelTool,
    input: ToolCallInput,
    host: CallHost | undefined,
  ): Promise<ModelToolOutcome> => {
    const started = clock.now();
    const { owner, id } = splitSessionKey(input.key.sessionId);
    const afterToolOutput = (await host?.afterToolOutput(port.ownWords)) ?? false;
    const context = { owner, sessionId: id, turnId: input.key.turnId, callId: input.callId, afterToolOutput };
    const { success, text, result } = await port.call(input.name, input.args, context);
    return {
      success,
      text: capText(text, maxResultBytes).text,
      result,
      serverId: tool.serverId,
      toolName: input.name,
      durationMs: clock.now() - started,
    };
  };

  const callTool = async (input: ToolCallInput, signal: AbortSignal, host?: CallHost): Promise<ModelToolOutcome> => {
    const memoryTool = memoryByName.get(input.name);
    if (memory && memoryTool) return callMemory(memory, memoryTool, input, host);
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
