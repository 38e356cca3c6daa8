/** A failed tool call (`kind`: timeout, cancelled, closed connection, or `protocol`), and SDK failures in words. */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { ResultTooLarge } from './limited-fetch.ts';

export class CallError extends Error {
  /**
   * `message` is what any principal's turn may show (the tool result the model reads); `forAdmins`, when given, says
   * more (a dying stdio server's stderr) and is shown only where admins look (the admin execute route, the log).
   */
  constructor(
    message: string,
    readonly kind: 'timeout' | 'cancelled' | 'closed' | 'protocol',
    readonly forAdmins: string = message,
  ) {
    super(message);
  }
}

/** Whether a failed call failed below the protocol (the HTTP server is unreachable or lost our session). */
export function belowProtocol(error: unknown): boolean {
  if (
    error instanceof ProtocolError ||
    error instanceof ResultTooLarge ||
    (error as { cause?: unknown } | null)?.cause instanceof ResultTooLarge
  )
    return false;
  if (error instanceof SdkHttpError) return true;
  if (error instanceof SdkError)
    return error.code === SdkErrorCode.SendFailed || error.code === SdkErrorCode.NotConnected;
  return true;
}

/** A reason for a person, in our words where we know better than the SDK. */
export function describe(error: unknown, timeout: number): string {
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return `timed out after ${timeout} ms`;
    if (error.code === SdkErrorCode.ConnectionClosed) return 'connection closed';
  }
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message && !error.message.includes(cause.message)
      ? `${error.message}: ${cause.message}`
      : error.message;
  }
  return String(error);
}

/** What a failed call's caller knows besides the error, for `callFailure`. */
export interface CallFacts {
  /** `config.timeout`; with `resetOnProgress` it bounds the gaps between progress, `totalTimeout` the whole call. */
  timeout: number;
  totalTimeout: number;
  resetOnProgress: boolean;
  /** The reason a sign-in wall gives, when the failure is one (`oauth.explain`). */
  signIn: (error: unknown) => string | undefined;
  /** Whether no progress came within `timeout` (the progress relay's timer). */
  noProgress: () => boolean;
  /** Whether the caller cancelled the call. */
  cancelled: () => boolean;
  /** How the connection closed: without (for any principal) or with (for admins) what a stdio server's stderr said. */
  closedReason: (withStderr: boolean) => string;
  /** Whether a failure below the protocol means the server is unreachable (not on stdio: its process says). */
  mayBeUnreachable: boolean;
  /** Told the reason when the server is unreachable (the connection is lost). */
  unreachable: (reason: string) => void;
}

/** A failed call as a CallError, checked in this order: sign-in, stalled, cancelled, timed out, closed, unreachable. */
export function callFailure(error: unknown, facts: CallFacts): CallError {
  const { timeout } = facts;
  if (error instanceof CallError) return error;
  const signIn = facts.signIn(error);
  if (signIn !== undefined) return new CallError(signIn, 'protocol');
  if (facts.noProgress()) return new CallError(`timed out after ${timeout} ms without progress`, 'timeout');
  if (facts.cancelled()) return new CallError('cancelled', 'cancelled');
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    const bound = facts.resetOnProgress ? `${facts.totalTimeout} ms in all (maxTotalTimeout)` : `${timeout} ms`;
    return new CallError(`timed out after ${bound}`, 'timeout');
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) {
    const closed = (withStderr: boolean) => `connection to the server closed (${facts.closedReason(withStderr)})`;
    return new CallError(closed(false), 'closed', closed(true));
  }
  if (facts.mayBeUnreachable && belowProtocol(error)) {
    const reason = describe(error, timeout);
    facts.unreachable(reason);
    return new CallError(`server unreachable: ${reason}`, 'closed');
  }
  return new CallError(describe(error, timeout), 'protocol');
}
