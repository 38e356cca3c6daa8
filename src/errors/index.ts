/**
 * The spec's error table: every error the service reports carries one of these codes.
 * `status` is the HTTP status; `null` marks codes that only travel as WebSocket `error` events.
 * FORBIDDEN (refused Origin/Host) and SERVICE_UNAVAILABLE (shutting down) extend the spec's table.
 */
export const ERROR_TABLE = {
  INVALID_REQUEST: 400,
  MISSING_FIELD: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  SERVER_NOT_FOUND: 404,
  TOOL_NOT_FOUND: 404,
  RATE_LIMIT_EXCEEDED: 429,
  TOOL_EXECUTION_FAILED: 500,
  AGENT_ERROR: 500,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  INVALID_MESSAGE_TYPE: null,
} as const satisfies Record<string, number | null>;

export type ErrorCode = keyof typeof ERROR_TABLE;
export type ErrorDetails = Record<string, unknown>;

/** The only error type components throw on purpose; anything else maps to INTERNAL_ERROR. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** HTTP status for a code; WebSocket-only codes answer 400 if ever sent over HTTP. */
export function httpStatus(code: ErrorCode): number {
  return ERROR_TABLE[code] ?? 400;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: ErrorDetails;
}

/** Turns anything thrown into the `{code, message, details}` triple of the spec's envelope. */
export function toErrorBody(e: unknown): ErrorBody {
  if (isAppError(e)) return { code: e.code, message: e.message, details: e.details };
  return { code: 'INTERNAL_ERROR', message: 'Unexpected error', details: {} };
}

/** The spec's REST error envelope. */
export function errorEnvelope(e: unknown, now: Date = new Date()) {
  return { success: false as const, error: toErrorBody(e), timestamp: now.toISOString() };
}
