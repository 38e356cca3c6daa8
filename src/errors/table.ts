/**
 * The error table: every reported error carries one of these codes, and the code alone decides each protocol's
 * encoding (encode.ts). `status`: HTTP (`null`: WebSocket-only, 400 over HTTP); `rpc`: the JSON-RPC code on /mcp.
 * The TASK_/UNSUPPORTED_/CONTENT_TYPE_/PUSH_ codes are A2A's. test/golden/error-table.json pins the table.
 */
export const ERROR_TABLE = {
  INVALID_REQUEST: { status: 400, rpc: -32600 },
  MISSING_FIELD: { status: 400, rpc: -32602 },
  UNAUTHORIZED: { status: 401, rpc: -32001 },
  FORBIDDEN: { status: 403, rpc: -32001 },
  SERVER_NOT_FOUND: { status: 404, rpc: -32602 },
  TOOL_NOT_FOUND: { status: 404, rpc: -32602 },
  APPROVAL_NOT_FOUND: { status: 404, rpc: -32602 },
  SESSION_NOT_FOUND: { status: 404, rpc: -32602 },
  ELICITATION_NOT_FOUND: { status: 404, rpc: -32602 },
  SCHEDULE_NOT_FOUND: { status: 404, rpc: -32602 },
  MEMORY_ITEM_NOT_FOUND: { status: 404, rpc: -32602 },
  APPROVAL_ALREADY_RESOLVED: { status: 409, rpc: -32600 },
  ELICITATION_ALREADY_RESOLVED: { status: 409, rpc: -32600 },
  RATE_LIMIT_EXCEEDED: { status: 429, rpc: -32000 },
  TOOL_EXECUTION_FAILED: { status: 500, rpc: -32603 },
  AGENT_ERROR: { status: 500, rpc: -32603 },
  INTERNAL_ERROR: { status: 500, rpc: -32603 },
  SERVICE_UNAVAILABLE: { status: 503, rpc: -32000 },
  INVALID_MESSAGE_TYPE: { status: null, rpc: -32600 },
  TASK_NOT_FOUND: { status: 404, rpc: -32602 },
  WEBHOOK_NOT_FOUND: { status: 404, rpc: -32602 },
  APP_NOT_FOUND: { status: 404, rpc: -32602 },
  TASK_NOT_CANCELABLE: { status: 409, rpc: -32600 },
  UNSUPPORTED_OPERATION: { status: 400, rpc: -32600 },
  CONTENT_TYPE_NOT_SUPPORTED: { status: 415, rpc: -32602 },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { status: 400, rpc: -32600 },
} as const satisfies Record<string, { status: number | null; rpc: number }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** The JSON-RPC code an A2A client reads on /a2a where it differs from `rpc` (A2A's own -32001..-32005). */
export const A2A_RPC: Partial<Record<ErrorCode, number>> = {
  TASK_NOT_FOUND: -32001,
  SESSION_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  // -32001 is TaskNotFound in A2A: a refusal inside /a2a (hop limit, approve scope) is an invalid request there.
  FORBIDDEN: -32600,
  UNAUTHORIZED: -32600,
};
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

/** HTTP status for a code (WebSocket-only codes: 400). */
export function httpStatus(code: ErrorCode): number {
  return ERROR_TABLE[code].status ?? 400;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: ErrorDetails;
}

/** Anything thrown as the spec's `{code, message, details}`. */
export function toErrorBody(e: unknown): ErrorBody {
  if (isAppError(e)) return { code: e.code, message: e.message, details: e.details };
  return { code: 'INTERNAL_ERROR', message: 'Unexpected error', details: {} };
}
