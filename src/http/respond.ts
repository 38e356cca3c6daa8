import type { EngineResponse } from './engine/index.ts';
import { toJsonRpc, toRestReply } from '../errors/index.ts';

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** The spec's REST error envelope, stamped `nowMs`, with the status of the error's code (or `status`). */
export function errorReply(err: unknown, nowMs: number, status?: number): Reply {
  const encoded = toRestReply(err, nowMs, status);
  return jsonReply(encoded.status, encoded.body);
}

/** The JSON-RPC error body of /mcp, with the status of the error's code (or `status`). */
export function rpcErrorReply(err: unknown, status?: number): Reply {
  const encoded = toJsonRpc(err, status);
  return jsonReply(encoded.status, encoded.body);
}

/** Writes a reply unless the response ended (or the client left); `extra` headers first. */
export function send(
  res: Pick<EngineResponse, 'ended' | 'send'>,
  reply: Reply,
  extra: Record<string, string> = {},
): void {
  if (res.ended) return;
  // Object.assign, not `{ ...extra, ...reply.headers }`: a spread after a spread takes V8's slow path on Node 20.
  res.send(reply.status, Object.assign({}, extra, reply.headers), reply.body);
}
