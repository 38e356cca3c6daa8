import { AppError } from '../errors/index.ts';
import { isSessionKey, sessionKeySchema } from '../session-id.ts';

/**
 * An engine's check of every call: refuses it once the store is closed (SERVICE_UNAVAILABLE), then, with
 * INVALID_REQUEST, a session key that breaks the rule of keys (src/session-id.ts).
 */
export const storeGuard =
  (isClosed: () => boolean) =>
  (sessionId?: string): void => {
    if (isClosed()) throw new AppError('SERVICE_UNAVAILABLE', 'event store is closed');
    if (sessionId === undefined || isSessionKey(sessionId)) return;
    const parsed = sessionKeySchema.safeParse(sessionId);
    if (!parsed.success)
      throw new AppError('INVALID_REQUEST', `sessionId ${parsed.error.issues[0]?.message ?? 'is invalid'}`, {
        field: 'sessionId',
      });
  };
