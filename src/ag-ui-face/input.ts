/**
 * What a run asks for: AG-UI's `RunAgentInput` (@ag-ui/core's own schema) read at the edge.
 *
 * Contracts:
 * - `readRunInput(body)` answers the input, or throws INVALID_REQUEST naming the first field that does not
 *   fit (MISSING_FIELD for an absent one). `threadId` is a session id (`sessionIdSchema`: the caller's
 *   session, by the one rule of ids); `runId` is a turn id: 1–128 characters of letters, digits and
 *   `._:-` (the client's UUIDs fit; a `/` never does, as task ids of A2A hold turn ids after one).
 * - `userTexts(messages)` is the text of each user message in order (text parts joined, other parts left out);
 *   `newUserText(messages)` the text of the last message when it is the user's, else `undefined`.
 */
import { contentHasMedia, contentToText, type Message, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { z } from 'zod';
import { AppError } from '../errors/index.ts';
import { sessionIdSchema } from '../session-id.ts';

export const runIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'a run id is 1–128 letters, digits, ".", "_", ":" or "-"');

export type RunInput = RunAgentInput;

export function readRunInput(body: unknown): RunInput {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error.issues[0]);
  const ids = z.object({ threadId: sessionIdSchema, runId: runIdSchema }).safeParse(parsed.data);
  if (!ids.success) throw invalid(ids.error.issues[0]);
  return parsed.data as RunInput;
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

export const userTexts = (messages: readonly Message[]): string[] =>
  messages.filter(isUser).map((m) => contentToText(m.content));

/** The new user message of a run: the last message, when it is the user's. */
export function newUserMessage(messages: readonly Message[]): { id: string; text: string } | undefined {
  const last = messages.at(-1);
  if (!last || !isUser(last)) return undefined;
  if (contentHasMedia(last.content))
    throw new AppError('CONTENT_TYPE_NOT_SUPPORTED', 'Only text parts are accepted in a user message over AG-UI');
  return { id: last.id, text: contentToText(last.content) };
}
