import { AppError } from '../errors/index.ts';
import { sessionIdSchema } from '../session-id.ts';

/** Refuses, with INVALID_REQUEST, a session id that breaks the one rule (src/session-id.ts). */
export function assertSessionId(id: string): void {
  const parsed = sessionIdSchema.safeParse(id);
  if (!parsed.success) throw new AppError('INVALID_REQUEST', `sessionId ${parsed.error.issues[0]?.message ?? 'is invalid'}`, { field: 'sessionId' });
}
