/**
 * One encoder per protocol, all driven by ERROR_TABLE. Anything that is not an AppError is INTERNAL_ERROR with a
 * generic message (no internals leak). A `status` argument overrides the table's only where the transport needs it.
 * Nothing here reads the time: REST's `timestamp` comes from the caller's `nowMs`.
 */
import { A2A_RPC, ERROR_TABLE, httpStatus, toErrorBody, type ErrorBody } from './table.ts';

/** The spec's REST error envelope, stamped with `nowMs` (milliseconds since the epoch), with the code's HTTP status. */
export function toRestReply(e: unknown, nowMs: number, status?: number) {
  const error = toErrorBody(e);
  const body = { success: false as const, error, timestamp: new Date(nowMs).toISOString() };
  return { status: status ?? httpStatus(error.code), body };
}

export function toWsFrame(e: unknown, sessionId?: string) {
  const body = toErrorBody(e);
  return { event: 'error' as const, data: sessionId === undefined ? body : { ...body, sessionId } };
}

/** JSON-RPC error (`data: { code, ...details }`) with the code's HTTP status, so /mcp and REST agree on one. */
export function toJsonRpc(e: unknown, status?: number) {
  const { code, message, details } = toErrorBody(e);
  return {
    status: status ?? httpStatus(code),
    body: { jsonrpc: '2.0', error: { code: ERROR_TABLE[code].rpc, message, data: { ...details, code } }, id: null },
  };
}

/** The `error` member of an A2A JSON-RPC response (inside a 200): `data` is `[ErrorInfo]` in v1.0, `{ code, ...details }` in v0.3. */
export function toA2aRpc(e: unknown, version: '1.0' | '0.3' = '0.3') {
  const { code, message, details } = toErrorBody(e);
  const rpc = A2A_RPC[code] ?? ERROR_TABLE[code].rpc;
  return { code: rpc, message, data: version === '1.0' ? [a2aErrorInfo(code, details)] : { ...details, code } };
}

/** `google.rpc.ErrorInfo`: A2A's reason (domain `a2a-protocol.org`) for its own conditions, else agentd's code (domain `agentd`); `metadata` holds `code` and the details as strings. */
function a2aErrorInfo(code: ErrorBody['code'], details: Record<string, unknown>) {
  const a2aReason = A2A_REASON[A2A_RPC[code] ?? 0];
  const metadata: Record<string, string> = { code };
  for (const [k, v] of Object.entries(details)) metadata[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: a2aReason ?? code,
    domain: a2aReason ? 'a2a-protocol.org' : 'agentd',
    metadata,
  };
}

/** AIP-193's canonical status name of each HTTP status the table (and a 404/405 of a route) answers. */
const CANONICAL_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  409: 'FAILED_PRECONDITION',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};
/** A2A's ErrorInfo reasons, by its JSON-RPC code. */
const A2A_REASON: Record<number, string> = {
  [-32001]: 'TASK_NOT_FOUND',
  [-32002]: 'TASK_NOT_CANCELABLE',
  [-32003]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [-32004]: 'UNSUPPORTED_OPERATION',
  [-32005]: 'CONTENT_TYPE_NOT_SUPPORTED',
};

/** A2A's HTTP+JSON error (AIP-193) with the code's HTTP status, or `status` (a route's 404 or 405). */
export function toA2aRest(e: unknown, status?: number) {
  const { code, message, details } = toErrorBody(e);
  const httpCode = status ?? httpStatus(code);
  const info = a2aErrorInfo(code, details);
  return {
    status: httpCode,
    body: { error: { code: httpCode, status: CANONICAL_STATUS[httpCode] ?? 'UNKNOWN', message, details: [info] } },
  };
}

/** The fields of an AG-UI `RUN_ERROR` event (`rawEvent`: agentd's own error frame, with `details`); the face adds its `type`. */
export function toAgUiRunError(e: unknown) {
  const frame = toWsFrame(e);
  return { message: frame.data.message, code: frame.data.code, rawEvent: frame };
}
