/**
 * A run's `RunAgentInput`, read at the edge with @ag-ui/core's own schema: INVALID_REQUEST naming the first
 * field that does not fit (MISSING_FIELD for an absent one). `threadId` is a session id; `runId` a turn id,
 * so never with a `/` (A2A task ids put the turn id after one).
 */
import { contentHasMedia, contentToText, type Message, type RunAgentInput } from '@ag-ui/core';
import { z } from 'zod';
import { AppError } from '../errors/index.ts';
import { sessionIdSchema, turnIdSchema } from '../session-id.ts';

/** @ag-ui/core's schemas are loaded by the first run (not at start: they are large). */
export async function readRunInput(body: unknown): Promise<RunAgentInput> {
  const { RunAgentInputSchema } = await import('@ag-ui/core/schemas');
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error.issues[0]);
  const ids = z.object({ threadId: sessionIdSchema, runId: turnIdSchema }).safeParse(parsed.data);
  if (!ids.success) throw invalid(ids.error.issues[0]);
  return parsed.data as RunAgentInput;
}

function invalid(issue: { path: PropertyKey[]; message: string; code?: string } | undefined): AppError {
  const field = issue?.path.map(String).join('.') || 'body';
  const missing = issue?.code === 'invalid_type' && /received undefined/.test(issue.message);
  return new AppError(
    missing ? 'MISSING_FIELD' : 'INVALID_REQUEST',
    `Not a RunAgentInput: ${field}: ${issue?.message ?? 'invalid'}`,
    { field },
  );
}

const isUser = (m: Message): m is Extract<Message, { role: 'user' }> => m.role === 'user';

/** The text parts of each user message, joined; other parts left out. */
export const userTexts = (messages: readonly Message[]): string[] =>
  messages.filter(isUser).map((m) => contentToText(m.content));

/** The last message when it is the user's (text only, else CONTENT_TYPE_NOT_SUPPORTED). */
export function newUserMessage(messages: readonly Message[]): { id: string; text: string } | undefined {
  const last = messages.at(-1);
  if (!last || !isUser(last)) return undefined;
  if (contentHasMedia(last.content))
    throw new AppError('CONTENT_TYPE_NOT_SUPPORTED', 'Only text parts are accepted in a user message over AG-UI');
  return { id: last.id, text: contentToText(last.content) };
}
