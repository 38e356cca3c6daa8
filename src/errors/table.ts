/**
 * The error table: every error the service reports carries one of these codes, and the code alone decides
 * how each protocol encodes it (see `encode.ts`).
 *
 * - `status`: the HTTP status (REST envelope, refused WebSocket upgrade, /mcp). `null` marks codes that only
 *   travel as WebSocket `error` events; sent over HTTP anyway they answer 400.
 * - `rpc`: the JSON-RPC error code an MCP client reads on /mcp. -32600 (Invalid Request) for a request that is
 *   malformed, -32602 (Invalid params) for a missing field or an unknown name, -32001 for refused credentials or
 *   provenance, -32000 for "try again later", -32603 (Internal error) for failures on our side.
 *
 * TASK_NOT_FOUND, TASK_NOT_CANCELABLE, UNSUPPORTED_OPERATION, CONTENT_TYPE_NOT_SUPPORTED and
 * PUSH_NOTIFICATION_NOT_SUPPORTED are A2A's conditions (/a2a, src/a2a-face); `A2A_RPC` gives their A2A codes.
 *
 * FORBIDDEN (refused Origin/Host/self-connection, a principal short of a scope), SERVICE_UNAVAILABLE (shutting
 * down), SESSION_NOT_FOUND (no such session of the caller's, when principals are configured) and the two
 * APPROVAL_ codes (answering a tool call that waits for approval) and the two ELICITATION_ codes (answering a tool
 * server's question, src/conversation/questions.ts) extend the spec's table. `test/golden/error-table.json` pins this table; changing a row is deliberate.
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
  APPROVAL_ALREADY_RESOLVED: { status: 409, rpc: -32600 },
  ELICITATION_ALREADY_RESOLVED: { status: 409, rpc: -32600 },
  RATE_LIMIT_EXCEEDED: { status: 429, rpc: -32000 },
  TOOL_EXECUTION_FAILED: { status: 500, rpc: -32603 },
  AGENT_ERROR: { status: 500, rpc: -32603 },
  INTERNAL_ERROR: { status: 500, rpc: -32603 },
  SERVICE_UNAVAILABLE: { status: 503, rpc: -32000 },
  INVALID_MESSAGE_TYPE: { status: null, rpc: -32600 },
  TASK_NOT_FOUND: { status: 404, rpc: -32602 },
  TASK_NOT_CANCELABLE: { status: 409, rpc: -32600 },
  UNSUPPORTED_OPERATION: { status: 400, rpc: -32600 },
  CONTENT_TYPE_NOT_SUPPORTED: { status: 415, rpc: -32602 },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { status: 400, rpc: -32600 },
} as const satisfies Record<string, { status: number | null; rpc: number }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/**
 * The A2A column: the JSON-RPC code an A2A client reads on /a2a (A2A's own codes -32001..-32005 for its
 * conditions; every other code keeps its `rpc` code). Kept beside the table so one place maps a code for
 * every protocol (`toA2aRpc` in encode.ts reads it).
 */
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

/** HTTP status for a code; WebSocket-only codes answer 400 if ever sent over HTTP. */
export function httpStatus(code: ErrorCode): number {
  return ERROR_TABLE[code].status ?? 400;
}

/** JSON-RPC error code for a code. */
export function rpcCode(code: ErrorCode): number {
  return ERROR_TABLE[code].rpc;
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
