/**
 * One encoder per protocol, all driven by ERROR_TABLE.
 *
 * Contracts:
 * - `toRestReply`: the spec's envelope `{ success: false, error: { code, message, details }, timestamp }` with the
 *   code's HTTP status. `timestamp` is ISO 8601 UTC with milliseconds of `nowMs` (the caller reads its injected
 *   clock; nothing here reads the time).
 * - `toWsFrame`: the `error` event `{ event: 'error', data: { code, message, details, sessionId? } }`.
 * - `toJsonRpc`: `{ jsonrpc: '2.0', error: { code: <rpc>, message, data: { code, ...details } }, id: null }` with the
 *   code's HTTP status, so /mcp and REST answer one condition with one status.
 * - `toA2aRpc`: the JSON-RPC error object of /a2a, `{ code: <A2A code or rpc>, message, data }` (A2A answers inside a
 *   200 JSON-RPC response, so no status): `data` is `[ErrorInfo]` in v1.0 (as `toA2aRest`), `{ code, ...details }` in
 *   v0.3.
 * - `toA2aRest`: A2A's HTTP+JSON error (AIP-193), `{ error: { code: <status>, status: <canonical name>, message,
 *   details: [ErrorInfo] } }` with the code's HTTP status; the ErrorInfo's `reason` is A2A's name for its own
 *   conditions (domain `a2a-protocol.org`, e.g. TASK_NOT_FOUND), else agentd's code (domain `agentd`); its
 *   `metadata` holds agentd's `code` and the details as strings.
 * - `toAgUiRunError`: the fields of AG-UI's `RUN_ERROR` event, `{ message, code, rawEvent }`: `code` is the table's
 *   code and `rawEvent` agentd's own error frame (`toWsFrame`), which carries `details`.
 * - `status` overrides the table's status only where the transport needs it (/mcp's 405 with `Allow: POST`).
 * - Anything that is not an AppError is INTERNAL_ERROR with a generic message (no internals leak).
 */
import { A2A_RPC, httpStatus, rpcCode, toErrorBody, type ErrorBody } from './table.ts';

export interface EncodedError<B> {
  status: number;
  body: B;
}

export interface RestErrorEnvelope {
  success: false;
  error: ErrorBody;
  timestamp: string;
}

export interface WsErrorFrame {
  event: 'error';
  data: ErrorBody & { sessionId?: string };
}

export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  error: { code: number; message: string; data: Record<string, unknown> & { code: ErrorBody['code'] } };
  id: null;
}

/** The spec's REST error envelope, stamped with `nowMs` (milliseconds since the epoch). */
export function errorEnvelope(e: unknown, nowMs: number): RestErrorEnvelope {
  return { success: false, error: toErrorBody(e), timestamp: new Date(nowMs).toISOString() };
}

export function toRestReply(e: unknown, nowMs: number, status?: number): EncodedError<RestErrorEnvelope> {
  const body = errorEnvelope(e, nowMs);
  return { status: status ?? httpStatus(body.error.code), body };
}

export function toWsFrame(e: unknown, sessionId?: string): WsErrorFrame {
  const body = toErrorBody(e);
  return { event: 'error', data: sessionId === undefined ? body : { ...body, sessionId } };
}

export function toJsonRpc(e: unknown, status?: number): EncodedError<JsonRpcErrorBody> {
  const { code, message, details } = toErrorBody(e);
  return {
    status: status ?? httpStatus(code),
    body: { jsonrpc: '2.0', error: { code: rpcCode(code), message, data: { ...details, code } }, id: null },
  };
}

/** The `error` member of an A2A JSON-RPC response (see the contracts). */
export function toA2aRpc(e: unknown, version: '1.0' | '0.3' = '0.3'): A2aRpcError {
  const { code, message, details } = toErrorBody(e);
  const rpc = A2A_RPC[code] ?? rpcCode(code);
  return { code: rpc, message, data: version === '1.0' ? [a2aErrorInfo(code, details)] : { ...details, code } };
}

/** A JSON-RPC error of /a2a (see the contracts). */
export interface A2aRpcError {
  code: number;
  message: string;
  data: A2aErrorInfo[] | (Record<string, unknown> & { code: ErrorBody['code'] });
}

/** `google.rpc.ErrorInfo` of an error: A2A's reason for its own conditions, else agentd's code (see the contracts). */
export interface A2aErrorInfo {
  '@type': string;
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

function a2aErrorInfo(code: ErrorBody['code'], details: Record<string, unknown>): A2aErrorInfo {
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

export interface A2aRestErrorBody {
  error: {
    code: number;
    status: string;
    message: string;
    details: A2aErrorInfo[];
  };
}

/** The A2A HTTP+JSON error (see the contracts); `status` overrides the table's (a 404 or 405 of the route). */
export function toA2aRest(e: unknown, status?: number): EncodedError<A2aRestErrorBody> {
  const { code, message, details } = toErrorBody(e);
  const httpCode = status ?? httpStatus(code);
  const info = a2aErrorInfo(code, details);
  return {
    status: httpCode,
    body: { error: { code: httpCode, status: CANONICAL_STATUS[httpCode] ?? 'UNKNOWN', message, details: [info] } },
  };
}

/** The fields of an AG-UI `RUN_ERROR` event (see the contracts); the face adds its `type`. */
export function toAgUiRunError(e: unknown): { message: string; code: ErrorBody['code']; rawEvent: WsErrorFrame } {
  const frame = toWsFrame(e);
  return { message: frame.data.message, code: frame.data.code, rawEvent: frame };
}
