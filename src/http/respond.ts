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

/** An error as an encoder of the error table gave it: its body as JSON, with its status. */
export const encodedReply = ({ status, body }: { status: number; body: unknown }): Reply => jsonReply(status, body);

/** The spec's REST error envelope, stamped `nowMs`, with the status of the error's code (or `status`). */
export const errorReply = (err: unknown, nowMs: number, status?: number): Reply =>
  encodedReply(toRestReply(err, nowMs, status));

/** The JSON-RPC error body of /mcp, with the status of the error's code (or `status`). */
export const rpcErrorReply = (err: unknown, status?: number): Reply => encodedReply(toJsonRpc(err, status));

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
