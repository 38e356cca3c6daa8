/**
 * What a compaction does to a session's history, as pure functions (src/agent/session/compactor.ts runs them).
 * - The history is only cut at the start of a turn (a `user` message), so a tool call and its result are never split;
 *   the last `keepTurns` turns are kept, or fewer when that leaves nothing to compact, down to `minKeep` (1 inside a
 *   running turn: its own question is never summarised away).
 * - Cheapest first: when clearing the tool results before the cut brings the estimate to `target`, they are cleared
 *   and no summary is asked for; a manual compaction, or one without a known window, asks for a summary.
 */
import type { CompactionMethod, CompactionTrigger } from '../../conversation/session-events.ts';
import { charsOf, tokensOf } from '../../conversation/token-estimate.ts';
import type { ChatMessage } from '../../llm/types.ts';

/** What the model sees of a tool result a compaction cleared. */
export const CLEARED_TOOL_RESULT = '[tool result cleared to save context; call the tool again if it is needed]';
/** Heads the summary message a compaction leaves. */
export const SUMMARY_HEADING = 'Summary of the earlier conversation (older messages were compacted into it):\n';

/** The compaction prompt used when `llm.compaction.prompt` is not set (documented in docs/sessions.md, "How"). */
export const DEFAULT_COMPACTION_PROMPT = [
  'You compact the history of a conversation between a user and an AI assistant that can call tools.',
  'Write a summary that lets the assistant carry on the conversation without the original messages.',
  'Keep: what the user wants (goals, requests, constraints, preferences); decisions taken and why;',
  'facts, names, numbers, identifiers, file paths and tool results that may matter later; what was done and what is still open.',
  'Drop greetings, repetition and anything superseded. Write in the language of the conversation, as short paragraphs or bullet points,',
  'at most about 400 words. If an earlier summary is given, fold it in. Answer with the summary only.',
].join(' ');

export interface Cut {
  /** Index of the first message kept (messages.length: none). */
  index: number;
  /** Every event with seq ≤ upToSeq is before the cut. */
  upToSeq: number;
}

/** Where to cut; `undefined` when nothing before the last turns can be compacted. */
export function selectCut(
  messages: readonly ChatMessage[],
  seqs: readonly number[],
  lastSeq: number,
  keepTurns: number,
  minKeep: number,
): Cut | undefined {
  const start = messages[0]?.role === 'system' ? 1 : 0;
  const turns: number[] = [];
  for (let i = start; i < messages.length; i++) if (messages[i]?.role === 'user') turns.push(i);
  for (let keep = Math.max(keepTurns, minKeep); keep >= minKeep; keep--) {
    if (keep > turns.length) continue;
    const index = keep === 0 ? messages.length : (turns[turns.length - keep] as number);
    if (index <= start) continue;
    return { index, upToSeq: index < messages.length ? (seqs[index] as number) - 1 : lastSeq };
  }
  return undefined;
}

/** Characters clearing the tool results before `index` would save. */
export function clearableChars(messages: readonly ChatMessage[], index: number): number {
  let saved = 0;
  for (let i = 0; i < index; i++) {
    const m = messages[i] as ChatMessage;
    if (m.role === 'tool' && m.content.length > CLEARED_TOOL_RESULT.length)
      saved += m.content.length - CLEARED_TOOL_RESULT.length;
  }
  return saved;
}

export interface PlanInput {
  messages: readonly ChatMessage[];
  seqs: readonly number[];
  lastSeq: number;
  keepTurns: number;
  minKeep: number;
  trigger: CompactionTrigger;
  /** The request's estimated tokens now. */
  tokens: number;
  /** Tokens to get under for clearing alone to do; undefined when no window is known. */
  target: number | undefined;
}

export interface CompactionPlan {
  method: CompactionMethod;
  cut: Cut;
  /** The estimated tokens after it (for a summary: without the summary itself). */
  tokensAfter: number;
}

export function planCompaction(p: PlanInput): CompactionPlan | undefined {
  const cut = selectCut(p.messages, p.seqs, p.lastSeq, p.keepTurns, p.minKeep);
  if (!cut) return undefined;
  const cleared = clearableChars(p.messages, cut.index);
  const afterClearing = p.tokens - tokensOf(cleared);
  if (p.trigger !== 'manual' && cleared > 0 && p.target !== undefined && afterClearing <= p.target) {
    return { method: 'clearToolResults', cut, tokensAfter: afterClearing };
  }
  let dropped = 0;
  for (let i = 0; i < cut.index; i++) dropped += charsOf(p.messages[i] as ChatMessage);
  return { method: 'summary', cut, tokensAfter: Math.max(0, p.tokens - tokensOf(dropped)) };
}

const TOOL_TEXT_CHARS = 1000;
const ARGS_CHARS = 300;
const shorten = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)} … [${text.length - max} more characters]` : text;

function transcriptLine(m: ChatMessage): string {
  switch (m.role) {
    case 'system':
      return `Earlier summary: ${m.content.startsWith(SUMMARY_HEADING) ? m.content.slice(SUMMARY_HEADING.length) : m.content}`;
    case 'user':
      return `User: ${m.content}${m.image ? ' [with an image]' : ''}`;
    case 'assistant': {
      const calls = (m.toolCalls ?? [])
        .map((c) => `\nAssistant called tool ${c.name} with ${shorten(c.arguments, ARGS_CHARS)}`)
        .join('');
      return `${m.content ? `Assistant: ${m.content}` : ''}${calls}`.trim();
    }
    case 'tool':
      return `Tool result: ${shorten(m.content, TOOL_TEXT_CHARS)}`;
  }
}

/**
 * The summary request for the messages before the cut: the prompt as system message, then their transcript (tool text
 * shortened; past `maxChars` the oldest lines but an earlier summary go first) inside `<conversation>` tags.
 */
export function summaryRequest(prompt: string, old: readonly ChatMessage[], maxChars: number): ChatMessage[] {
  const lines = old.map(transcriptLine).filter((l) => l !== '');
  const earlier = old[0]?.role === 'system' ? lines.shift() : undefined;
  let size = (earlier?.length ?? 0) + lines.reduce((n, l) => n + l.length + 1, 0);
  let omitted = 0;
  while (size > maxChars && lines.length > 1) {
    size -= (lines.shift() as string).length + 1;
    omitted++;
  }
  let kept = [earlier, omitted > 0 ? `[${omitted} older messages left out]` : undefined, ...lines].filter(
    (l) => l !== undefined,
  );
  // Still too long (a few huge messages): every line gets its share.
  if (size > maxChars) kept = kept.map((l) => shorten(l, Math.max(100, Math.floor(maxChars / kept.length) - 40)));
  const body = kept.join('\n');
  return [
    { role: 'system', content: prompt },
    {
      role: 'user',
      content: `<conversation>\n${body}\n</conversation>\n\nWrite the summary of the conversation above.`,
    },
  ];
}
