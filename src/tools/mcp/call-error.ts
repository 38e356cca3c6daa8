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
