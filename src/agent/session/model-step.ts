/**
 * The model step of a session's turns: the tool catalogue, the model request, its streamed chunks.
 *
 * Contracts:
 * - An app's call (`input.app`) is answered without the model (app-step.ts), once the turn's open mark and earlier
 *   facts are stored: no memory, budget, compaction or spending check applies to it.
 * - The step streams its own chunks (`emitChunk`, the hot path: one publish per delta, no machine
 *   event), the step's `prefix` before its first delta; nothing after the step was aborted.
 * - A step does not wait for the turn's earlier facts (its user message first) to be stored: its
 *   request carries them as the history will hold them (`tail`), its chunks queue behind them in
 *   the outbox, so none goes out before they are durable, and its result (tool calls, the turn's
 *   next facts) is returned only once they are. While a reset is being written the step builds on
 *   the history the reset leaves.
 * - The model sees the system prompt, then the history; the tools it gets carry the tool policy's
 *   action (absent: every call runs). The turn's client tools come after the tool servers' (named by
 *   `clientToolNames`: a name a server's tool has is offered as `client--<name>`); the policy does not
 *   apply to them (the client runs them). A compaction's summary (the history's leading `system`
 *   message) is joined to the system prompt: one system message, whatever the chat template. With
 *   `workingMemory`, each turn's first step reads it once and the system prompt ends with it for the
 *   whole turn (a compaction replaces history, never this message).
 * - Before the request, unless a compaction already ran for this step (`input.compacted`), the
 *   step answers `{ compact: "threshold" }` when the estimated request (context.ts) passes
 *   `threshold × window` or leaves less than `maxOutputTokens` free; and `{ compact: "overflow" }`
 *   when the provider answered a context overflow (whose window, if named, is learned). After a
 *   compaction an overflow is the step's failure (AGENT_ERROR, `details.reason: "context_overflow"`).
 * - Before the request the spending limits are checked (spend-check.ts), which may answer a BudgetRequest (a
 *   question first) or fail the step; then the token budgets (budget.ts): a request that would pass one
 *   fails the step with `details.reason: "token_budget"`; and the turn's open mark is written (`turnMarked`), so a
 *   process killed once the model was asked leaves its turn to be resumed.
 */
import { charsOfAll, charsOfTools } from '../../conversation/token-estimate.ts';
import type { BudgetRequest, ModelStepInput, ModelStepResult, TurnKey } from '../../conversation/turn-contract.ts';
import type { Clock } from '../../clock.ts';
import { isAppError } from '../../errors/index.ts';
import { CONTEXT_OVERFLOW } from '../../llm/failures.ts';
import type { ChatMessage, LlmClient } from '../../llm/types.ts';
import type { Budget } from '../compaction/budget.ts';
import type { ContextMeter, ContextSettings, UsageView } from '../compaction/context.ts';
import type { ModelTool } from '../../tools/messages.ts';
import { clientToolNames } from '../../tools/naming.ts';
import type { ClientTool } from '../../conversation/session-event-fields.ts';
import { CLIENT_SERVER_ID } from '../../conversation/tool-shapes.ts';
import type { History } from './history.ts';
import type { Outbox } from './outbox.ts';
import type { ToolPolicy } from '../questions/tool-policy.ts';
import { appStep } from './app-step.ts';

export interface ModelStepDeps {
  systemPrompt: string;
  /** The working-memory section appended to the system prompt of each new turn ('' for none; never rejects). */
  workingMemory?: () => Promise<string>;
  llm: LlmClient;
  clock: Clock;
  /** The model's tool catalogue (never rejects). */
  listTools: () => Promise<ModelTool[]>;
  toolPolicy?: ToolPolicy;
  history: History;
  outbox: Outbox;
  /** Sends a chunk of the turn's reply (queued behind the facts not yet stored). */
  emitChunk: (key: TurnKey, content: string) => void;
  context: ContextSettings;
  meter: ContextMeter;
  /** The session's usage so far, and the budgets it is held to. */
  usage: Pick<UsageView, 'current'>;
  budget: Budget;
  /** Told the characters of each request's tool definitions (the compactor's estimate counts them). */
  onToolChars?: (chars: number) => void;
  /** Resolves once the turn's open mark is written (open-mark.ts): the model is asked after it. */
  turnMarked?: () => Promise<void>;
  /** The spending check (spend-check.ts): a request to ask about a budget first, or none. Absent: no budgets. */
  spendCheck?: (input: ModelStepInput, promptTokens: number) => Promise<BudgetRequest | undefined>;
}

/**
 * The history as the model sees it: the system prompt, then the projection. The projection's view
 * only grows until a reset replaces it, so this mirror copies each message once (per-turn cost does
 * not grow with the session's length).
 */
function modelView(history: History, prompt: () => string) {
  let source: readonly ChatMessage[] | undefined;
  let view: ChatMessage[] = [];
  let shown: string | undefined;
  /** Messages of `source` the view leaves out (a leading summary, joined to the system message). */
  let skip = 0;
  return (): ChatMessage[] => {
    const list = history.messages();
    const systemPrompt = prompt();
    if (list !== source || systemPrompt !== shown || view.length - 1 + skip > list.length) {
      source = list;
      shown = systemPrompt;
      const first = list[0];
      skip = first?.role === 'system' ? 1 : 0;
      view = [
        { role: 'system', content: first?.role === 'system' ? `${systemPrompt}\n\n${first.content}` : systemPrompt },
      ];
    }
    for (let i = view.length - 1 + skip; i < list.length; i++) view.push(list[i] as ChatMessage);
    return view;
  };
}

const toDefinition = ({ name, description, parameters }: ModelTool) => ({ name, description, parameters });
const withActions = (tools: ModelTool[], policy: ToolPolicy | undefined) =>
  policy ? tools.map((t) => (t.client ? t : { ...t, action: policy(t.serverId, t.toolName) })) : tools;

/** The tool servers' tools, then the turn's client tools under names of their own (see the contracts). */
function withClientTools(tools: ModelTool[], client: readonly ClientTool[] | undefined): ModelTool[] {
  if (!client || client.length === 0) return tools;
  const names = clientToolNames(
    new Set(tools.map((t) => t.name)),
    client.map((t) => t.name),
  );
  return [
    ...tools,
    ...client.map((t, i) => ({
      name: names[i]!,
      description: t.description,
      parameters: t.parameters,
      serverId: CLIENT_SERVER_ID,
      toolName: t.name,
      client: true as const,
    })),
  ];
}

/** The session's model step (the turn machine's `modelStep` actor, through the session's port). */
export function createModelStep(
  deps: ModelStepDeps,
): (input: ModelStepInput, signal: AbortSignal) => Promise<ModelStepResult> {
  const { llm, clock, history, outbox, emitChunk, context, meter, budget } = deps;
  let systemPrompt = deps.systemPrompt;
  let promptTurn: string | undefined;
  const messages = modelView(history, () => systemPrompt);
  return async (input, signal) => {
    if (input.app) {
      await deps.turnMarked?.(); // as a model's: the turn is marked open before its call can start
      await outbox.drained();
      signal.throwIfAborted();
      return appStep(input.app, deps.toolPolicy, clock.now());
    }
    if (deps.workingMemory && promptTurn !== input.key.turnId) {
      promptTurn = input.key.turnId;
      systemPrompt = deps.systemPrompt + (await deps.workingMemory());
    }
    const tools = withClientTools(await deps.listTools(), input.clientTools);
    const definitions = tools.map(toDefinition);
    const toolChars = charsOfTools(definitions);
    /** The request's characters with `tail` after the history (context.ts). */
    const promptChars = (tail: readonly ChatMessage[]) =>
      systemPrompt.length + history.chars + charsOfAll(tail) + toolChars;
    await deps.turnMarked?.(); // the mark and the facts written beside it (the user's message) are stored
    if (deps.spendCheck) {
      const known = history.preview(outbox.pending()) ?? [];
      const asking = await deps.spendCheck(input, meter.estimate(history.messages(), promptChars(known)));
      if (asking) return asking;
    }
    // The facts the turn reported before this step reach the outbox in the same synchronous run
    // (through the session actor's mailbox), so past the first await they are all handed in; the history and
    // what is pending are read together, with no await between them and the request.
    let tail = history.preview(outbox.pending());
    if (!tail) {
      await outbox.drained(); // a reset is being written: build on the history it leaves
      tail = [];
    }
    signal.throwIfAborted();
    let prefix = input.prefix;
    // A flag, not `signal.aborted` per delta: node's getter checks its receiver every call (the hot path).
    let stopped = false;
    signal.addEventListener('abort', () => (stopped = true), { once: true });
    const onText = (delta: string) => {
      if (delta === '' || stopped) return;
      emitChunk(input.key, prefix + delta);
      prefix = '';
    };
    deps.onToolChars?.(toolChars);
    const list = history.messages();
    const chars = promptChars(tail);
    const window = context.window();
    const tokens = meter.estimate(list, chars);
    if (!input.compacted && window !== undefined) {
      if (tokens > context.threshold * window || tokens + context.maxOutputTokens > window)
        return { compact: 'threshold' };
    }
    budget.check(input.key.turnId, deps.usage.current().totalTokens, tokens);
    let step;
    try {
      step = await llm.complete({
        messages: messages(),
        tail,
        tools: definitions,
        signal,
        onText,
        turnId: input.key.turnId,
        sessionId: input.key.sessionId,
      });
    } catch (err) {
      if (!isAppError(err) || err.details.reason !== CONTEXT_OVERFLOW) throw err;
      const named = err.details.contextWindow;
      if (typeof named === 'number') context.learn(named);
      if (input.compacted) throw err;
      return { compact: 'overflow' };
    }
    meter.observe(list, chars, step.usage);
    budget.spent(input.key.turnId, step.usage);
    await outbox.drained();
    signal.throwIfAborted();
    return { step, tools: withActions(tools, deps.toolPolicy), at: clock.now() };
  };
}
