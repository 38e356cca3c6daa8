/**
 * The thread as the server keeps it, the source of truth: the session's frames since its last reset (what
 * `agent.thread` answers) as AG-UI messages. A snapshot carries the server's ids only (`<turnId>-user`, `<turnId>-reply`, ...): @ag-ui/client
 * keeps a message whose id it knows where it stands, so reusing some of the client's ids could reorder it.
 */
import type { Message } from '@ag-ui/core';
import { answerOfFrame, questionOfFrame, type AgentFrame } from '../agent/index.ts';
import type { AskedQuestion } from './interrupts.ts';
import { userTexts } from './input.ts';
import { resultText } from './run-view.ts';

/** With `before: turnId`, that turn contributes its user message only. */
export function threadMessages(frames: readonly AgentFrame[], opts: { before?: string } = {}): Message[] {
  const out: Message[] = [];
  let calls: Extract<Message, { role: 'assistant' }> | undefined;
  for (const f of frames) {
    const turnId = 'turnId' in f.data ? f.data.turnId : undefined;
    if (turnId === opts.before && f.event !== 'userMessage') continue;
    switch (f.event) {
      case 'userMessage':
        calls = undefined;
        out.push({ id: `${f.data.turnId}-user`, role: 'user', content: f.data.content });
        break;
      case 'toolCall': {
        const call = {
          id: f.data.callId,
          type: 'function' as const,
          function: { name: f.data.toolName, arguments: JSON.stringify(f.data.args ?? {}) },
        };
        if (calls) calls.toolCalls = [...(calls.toolCalls ?? []), call];
        else out.push((calls = { id: `${f.data.turnId}-calls-${f.data.seq}`, role: 'assistant', toolCalls: [call] }));
        break;
      }
      case 'toolResult':
        calls = undefined;
        out.push({
          id: `${f.data.callId}-result`,
          role: 'tool',
          toolCallId: f.data.callId,
          content: resultText(f.data.result),
          ...(!f.data.success && { error: resultText(f.data.result) }),
        });
        break;
      case 'response':
        calls = undefined;
        out.push({ id: `${f.data.turnId}-reply`, role: 'assistant', content: f.data.content });
        break;
      default:
        break;
    }
  }
  return out;
}

/** Whether the client's user messages (texts, in order) differ from the thread's; a new run's own left out. */
export function diverges(client: readonly Message[], frames: readonly AgentFrame[]): boolean {
  const ours = frames.flatMap((f) => (f.event === 'userMessage' ? [f.data.content] : []));
  const theirs = userTexts(client);
  return ours.length !== theirs.length || ours.some((text, i) => text !== theirs[i]);
}

/** Every question asked in the frames, by id, with how it was closed. */
export function questionsAsked(frames: readonly AgentFrame[]): Map<string, AskedQuestion> {
  const asked = new Map<string, AskedQuestion>();
  for (const f of frames) {
    const question = questionOfFrame(f);
    if (question) asked.set(question.id, { question });
    const closed = answerOfFrame(f);
    const was = closed && asked.get(closed.id);
    if (closed && was) asked.set(closed.id, { ...was, closedBy: { answer: closed.answer, by: closed.by } });
  }
  return asked;
}
