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
 * - `toA2aRpc`: the JSON-RPC error object of /a2a, `{ code: <A2A code or rpc>, message, data: { code, ...details } }`
 *   (A2A answers inside a 200 JSON-RPC response, so no status).
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
export function toA2aRpc(e: unknown): JsonRpcErrorBody['error'] {
  const { code, message, details } = toErrorBody(e);
  return { code: A2A_RPC[code] ?? rpcCode(code), message, data: { ...details, code } };
}

/** The fields of an AG-UI `RUN_ERROR` event (see the contracts); the face adds its `type`. */
export function toAgUiRunError(e: unknown): { message: string; code: ErrorBody['code']; rawEvent: WsErrorFrame } {
  const frame = toWsFrame(e);
  return { message: frame.data.message, code: frame.data.code, rawEvent: frame };
}
