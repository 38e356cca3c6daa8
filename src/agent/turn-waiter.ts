import type { AppBus } from '../bus/app-bus.ts';
import type { ResponseEvent } from './messages.ts';
import { AppError, ERROR_TABLE, type ErrorCode } from '../errors/index.ts';

interface Waiter {
  resolve(event: ResponseEvent): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
}

/**
 * Lets request/response endpoints wait for the end of the turn their command queued: one bus
 * listener for all waiters, matched by correlation id, each with a timeout.
 */
export function createTurnWaiter(bus: AppBus, timeoutMs: number) {
  const waiters = new Map<string, Waiter>();
  const settle = (correlationId: string) => {
    const w = waiters.get(correlationId);
    if (w) {
      waiters.delete(correlationId);
      clearTimeout(w.timer);
    }
    return w;
  };
  const offResponse = bus.on('agent.response', (e) => settle(e.correlationId)?.resolve(e.payload));
  const offError = bus.on('agent.error', (e) => {
    const { code, message, details } = e.payload;
    const known: ErrorCode = Object.hasOwn(ERROR_TABLE, code) ? (code as ErrorCode) : 'AGENT_ERROR';
    settle(e.correlationId)?.reject(new AppError(known, message, details));
  });

  return {
    /** Registers interest before the command is sent, so no answer can be missed. */
    wait(correlationId: string, signal?: AbortSignal): Promise<ResponseEvent> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          settle(correlationId);
          reject(new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms`, { reason: 'timeout' }));
        }, timeoutMs);
        waiters.set(correlationId, { resolve, reject, timer });
        signal?.addEventListener('abort', () => settle(correlationId)?.reject(new AppError('AGENT_ERROR', 'Request aborted by the client', { reason: 'aborted' })), { once: true });
      });
    },
    /** Forgets a waiter whose command failed before any turn started. */
    cancel: (correlationId: string) => void settle(correlationId),
    close(): void {
      offResponse();
      offError();
      for (const id of [...waiters.keys()]) settle(id)?.reject(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down'));
    },
  };
}
export type TurnWaiter = ReturnType<typeof createTurnWaiter>;
