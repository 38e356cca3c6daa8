/**
 * The model step of a session's turns: the tool catalogue, the model request, its streamed chunks.
 *
 * Contracts:
 * - The step streams its own chunks (`emitChunk`, the hot path: one publish per delta, no machine
 *   event), the step's `prefix` before its first delta; nothing after the step was aborted.
 * - A step does not wait for the turn's earlier facts (its user message first) to be stored: its
 *   request carries them as the history will hold them (`tail`), its chunks queue behind them in
 *   the outbox, so none goes out before they are durable, and its result (tool calls, the turn's
 *   next facts) is returned only once they are. While a reset is being written the step builds on
 *   the history the reset leaves.
 * - The model sees the system prompt, then the history; the tools it gets carry the tool policy's
 *   action (absent: every call runs).
 */
import type { ModelStepInput, ModelStepOutput, TurnKey } from '../conversation/turn-contract.ts';
import type { Clock } from '../clock.ts';
import type { ChatMessage, LlmClient } from '../llm/types.ts';
import type { ModelTool } from '../tools/messages.ts';
import type { History } from './history.ts';
import type { Outbox } from './outbox.ts';
import type { ToolPolicy } from './tool-policy.ts';

export interface ModelStepDeps {
  systemPrompt: string;
  llm: LlmClient;
  clock: Clock;
  /** The model's tool catalogue (never rejects). */
  listTools: () => Promise<ModelTool[]>;
  toolPolicy?: ToolPolicy;
  history: History;
  outbox: Outbox;
  /** Sends a chunk of the turn's reply (queued behind the facts not yet stored). */
  emitChunk: (key: TurnKey, content: string) => void;
}

/**
 * The history as the model sees it: the system prompt, then the projection. The projection's view
 * only grows until a reset replaces it, so this mirror copies each message once (per-turn cost does
 * not grow with the session's length).
 */
function modelView(history: History, systemPrompt: string) {
  const system: ChatMessage = { role: 'system', content: systemPrompt };
  let source: readonly ChatMessage[] | undefined;
  let view: ChatMessage[] = [];
  return (): ChatMessage[] => {
    const list = history.messages();
    if (list !== source || view.length - 1 > list.length) {
      source = list;
      view = [system];
    }
    for (let i = view.length - 1; i < list.length; i++) view.push(list[i] as ChatMessage);
    return view;
  };
}

const toDefinition = ({ name, description, parameters }: ModelTool) => ({ name, description, parameters });
const withActions = (tools: ModelTool[], policy: ToolPolicy | undefined) =>
  policy ? tools.map((t) => ({ ...t, action: policy(t.serverId, t.toolName) })) : tools;

/** The session's model step (the turn machine's `modelStep` actor, through the session's port). */
export function createModelStep(deps: ModelStepDeps): (input: ModelStepInput, signal: AbortSignal) => Promise<ModelStepOutput> {
  const { llm, clock, history, outbox, emitChunk } = deps;
  const messages = modelView(history, deps.systemPrompt);
  return async (input, signal) => {
    const tools = await deps.listTools();
    // The facts the turn reported before this step reach the outbox in the same synchronous run
    // (through the session actor's mailbox), so past the first await they are all handed in.
    let tail = history.preview(outbox.pending());
    if (!tail) {
      await outbox.drained(); // a reset is being written: build on the history it leaves
      tail = [];
    }
    signal.throwIfAborted();
    let prefix = input.prefix;
    const onText = (delta: string) => {
      if (delta === '' || signal.aborted) return;
      emitChunk(input.key, prefix + delta);
      prefix = '';
    };
    const step = await llm.complete({ messages: messages(), tail, tools: tools.map(toDefinition), signal, onText, turnId: input.key.turnId });
    await outbox.drained();
    signal.throwIfAborted();
    return { step, tools: withActions(tools, deps.toolPolicy), at: clock.now() };
  };
}
