/**
 * Tools the client runs (docs/ag-ui.md, "Tools the client runs"): a run's `tools` checked as the turn keeps
 * them, and the trailing `tool` messages of the next run (after the last message of another role) as the
 * answers to the thread's open `clientTool` questions. A trailing message naming a call already closed is
 * refused before anything is answered (APPROVAL_ALREADY_RESOLVED); one naming anything else is no answer.
 */
import { contentToText, type Message } from '@ag-ui/core';
import type { Question } from '../agent/index.ts';
import type { ClientToolReply } from '../conversation/questions.ts';
import { AppError } from '../errors/index.ts';
import type { AskedQuestion } from './interrupts.ts';

function trailingToolMessages(messages: readonly Message[]): Extract<Message, { role: 'tool' }>[] {
  const last = messages.findLastIndex((m) => m.role !== 'tool');
  return messages.slice(last + 1).filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
}

export function clientResults(
  messages: readonly Message[],
  open: readonly Question[],
  asked: ReadonlyMap<string, AskedQuestion>,
): { q: Question; answer: ClientToolReply }[] {
  const results: { q: Question; answer: ClientToolReply }[] = [];
  for (const m of trailingToolMessages(messages)) {
    const q = open.find((o) => o.kind === 'clientTool' && o.id === m.toolCallId);
    if (q) {
      const content = contentToText(m.content);
      results.push({ q, answer: { content, ...(m.error !== undefined && { error: m.error }) } });
      continue;
    }
    const was = asked.get(m.toolCallId);
    if (was?.question.kind !== 'clientTool') continue;
    const expired = was.closedBy ? was.closedBy.by === 'timeout' : true;
    throw new AppError(
      'APPROVAL_ALREADY_RESOLVED',
      expired
        ? `The client tool call "${m.toolCallId}" expired at ${was.question.expiresAt}: its result came too late`
        : `The client tool call "${m.toolCallId}" already has its result`,
      { toolCallId: m.toolCallId, reason: expired ? 'expired' : 'answered', expiresAt: was.question.expiresAt },
    );
  }
  return results;
}
