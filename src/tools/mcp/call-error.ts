/**
 * A failed tool call; `kind` tells timeouts, cancellations and dead connections from tool-side errors.
 * Shared by both protocol eras; connection.ts re-exports it.
 */
export class CallError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'cancelled' | 'closed' | 'protocol',
  ) {
    super(message);
  }
}
