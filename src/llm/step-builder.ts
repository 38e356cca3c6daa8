/**
 * Folds streamed chat completion chunks into one ModelStep. This is the per-chunk hot path:
 * no logging, no allocation beyond the text and tool-call slots themselves. Reasoning streams as
 * `reasoning_content` (DeepSeek, vLLM) or `reasoning` (Ollama, OpenRouter) beside the content.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { TextFolder, usageOf, type StepFolder } from './adapter.ts';
import type { ModelStep, ToolCallRequest } from './types.ts';

/** Reasoning fields of a chat message or delta, as providers other than OpenAI send them. */
export interface ChatReasoning {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

export const reasoningOf = (m: ChatReasoning): string => m.reasoning_content || m.reasoning || '';

/**
 * The step's usage from a chat `usage` object: cached tokens from `prompt_tokens_details`, reasoning tokens from
 * `completion_tokens_details`, and the cost the provider reports itself (OpenRouter's `cost`, in USD credits).
 */
export function chatUsage(u: CompletionUsage & { cost?: unknown }): ReturnType<typeof usageOf> {
  const usage = usageOf(
    u.prompt_tokens,
    u.completion_tokens,
    u.prompt_tokens_details?.cached_tokens,
    undefined,
    u.completion_tokens_details?.reasoning_tokens,
  );
  usage.totalTokens = u.total_tokens;
  if (typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost >= 0)
    usage.cost = { amount: u.cost, currency: 'USD', source: 'provider' };
  return usage;
}

export class StepBuilder extends TextFolder implements StepFolder {
  private text = '';
  private reasoning = '';
  private finishReason = '';
  private usage: CompletionUsage | undefined;
  private readonly slots: ToolCallRequest[] = [];
  private readonly byIndex = new Map<number, ToolCallRequest>();
  private last: ToolCallRequest | undefined;

  /**
   * Takes one chunk. Tool-call deltas are matched by `index`; a delta without an index continues
   * the latest call, and a delta whose id differs from its slot's id starts a new call (providers
   * that send every parallel call complete, all at index 0). Throws TextCallbackError if onText does.
   */
  add(event: unknown): void {
    const chunk = event as ChatCompletionChunk;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (choice === undefined) return;
    const delta = choice.delta as (ChatCompletionChunk.Choice.Delta & ChatReasoning) | undefined;
    if (delta) {
      const content = delta.content;
      if (content) {
        this.text += content;
        this.emit(content);
      }
      const thought = delta.reasoning_content || delta.reasoning;
      if (thought) {
        this.reasoning += thought;
        this.chars += thought.length;
      }
      const calls = delta.tool_calls;
      if (calls) for (const call of calls) this.addToolDelta(call);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private addToolDelta(call: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    const index = typeof call.index === 'number' ? call.index : undefined;
    let slot = index === undefined ? this.last : this.byIndex.get(index);
    if (slot === undefined || (call.id && slot.id && call.id !== slot.id)) {
      slot = { id: '', name: '', arguments: '' };
      this.slots.push(slot);
      if (index !== undefined) this.byIndex.set(index, slot);
    }
    this.last = slot;
    if (call.id && !slot.id) slot.id = call.id;
    const fn = call.function;
    if (fn) {
      if (fn.name && fn.name !== slot.name) slot.name += fn.name;
      if (fn.arguments) {
        slot.arguments += fn.arguments;
        this.chars += fn.arguments.length;
      }
    }
  }

  /**
   * A whole chat stream has a `finish_reason` (some servers leave out `data: [DONE]`, none the finish) or ends
   * with `[DONE]`; its tool calls are closed only by a `finish_reason`.
   */
  unfinished(done: boolean): string | undefined {
    if (this.finishReason) return undefined;
    if (this.slots.length > 0) return 'a tool call without a finish_reason';
    return done ? undefined : 'no finish_reason and no [DONE]';
  }

  /** The step so far; calls without an id get one from `newId`. finishReason is 'unknown' if none came. */
  build(newId: () => string): ModelStep {
    const toolCalls = this.slots.map((s) => ({ ...s, id: s.id || newId() }));
    const step: ModelStep = { text: this.text, toolCalls, finishReason: this.finishReason || 'unknown' };
    if (this.usage) step.usage = chatUsage(this.usage);
    if (this.reasoning) step.reasoning = { api: 'chat', text: this.reasoning };
    return step;
  }
}
