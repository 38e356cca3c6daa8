/**
 * The thread as the server keeps it, the source of truth: the session's facts since its last reset (what
 * `agent.thread` answers) as AG-UI messages. A snapshot carries the server's ids only (`<turnId>-user`, `<turnId>-reply`, ...): @ag-ui/client
 * keeps a message whose id it knows where it stands, so reusing some of the client's ids could reorder it. A call
 * whose MCP App was kept is followed by its `mcp-apps` activity message (app-activity.ts).
 */
import type { Message } from '@ag-ui/core';
import type { SessionStoredEvent } from '../agent/index.ts';
import { questionOf } from '../conversation/questions.ts';
import type { AskedQuestion } from './interrupts.ts';
import { appActivityMessage } from './app-activity.ts';
import { userTexts } from './input.ts';
import { resultText } from './run-events.ts';

/** With `before: turnId`, that turn contributes its user message only. */
export function threadMessages(facts: readonly SessionStoredEvent[], opts: { before?: string } = {}): Message[] {
  const out: Message[] = [];
  let calls: Extract<Message, { role: 'assistant' }> | undefined;
  const args = new Map<string, unknown>();
  for (const { event: e, seq } of facts) {
    const turnId = 'turnId' in e ? e.turnId : undefined;
    if (turnId === opts.before && e.type !== 'userMessage') continue;
    switch (e.type) {
      case 'userMessage':
        calls = undefined;
        // An MCP App's call (appCallId) has no message of a person: its call and result follow.
        if (e.appCallId === undefined) out.push({ id: `${e.turnId}-user`, role: 'user', content: e.content });
        break;
      case 'toolCall': {
        args.set(e.callId, e.args);
        const call = {
          id: e.callId,
          type: 'function' as const,
          function: { name: e.toolName, arguments: JSON.stringify(e.args ?? {}) },
        };
        if (calls) calls.toolCalls = [...(calls.toolCalls ?? []), call];
        else out.push((calls = { id: `${e.turnId}-calls-${seq}`, role: 'assistant', toolCalls: [call] }));
        break;
      }
      case 'toolResult': {
        calls = undefined;
        out.push({
          id: `${e.callId}-result`,
          role: 'tool',
          toolCallId: e.callId,
          content: resultText(e.result),
          ...(!e.success && { error: resultText(e.result) }),
        });
        const app = appActivityMessage(e, args.get(e.callId));
        if (app) out.push(app);
        break;
      }
      case 'response':
        calls = undefined;
        out.push({ id: `${e.turnId}-reply`, role: 'assistant', content: e.content });
        break;
      default:
        break;
    }
  }
  return out;
}

/** Whether the client's user messages (texts, in order) differ from the thread's; a new run's own left out. */
export function diverges(client: readonly Message[], facts: readonly SessionStoredEvent[]): boolean {
  const ours = facts.flatMap(({ event: e }) =>
    e.type === 'userMessage' && e.appCallId === undefined ? [e.content] : [],
  );
  const theirs = userTexts(client);
  return ours.length !== theirs.length || ours.some((text, i) => text !== theirs[i]);
}

/** Every question asked in the facts, by id, with how it was closed. */
export function questionsAsked(facts: readonly SessionStoredEvent[]): Map<string, AskedQuestion> {
  const asked = new Map<string, AskedQuestion>();
  for (const { event: e, sessionId } of facts) {
    const question = questionOf(e, sessionId);
    if (question) asked.set(question.id, { question });
    const was = e.type === 'questionClosed' ? asked.get(e.id) : undefined;
    if (e.type === 'questionClosed' && was) asked.set(e.id, { ...was, closedBy: { answer: e.answer, by: e.by } });
  }
  return asked;
}

/** The seq of the fact that asked each of `ids` (0 when none did). */
export const askedAt = (facts: readonly SessionStoredEvent[], ids: ReadonlySet<string>): number =>
  Math.max(0, ...facts.map((s) => (s.event.type === 'questionAsked' && ids.has(s.event.question.id) ? s.seq : 0)));
