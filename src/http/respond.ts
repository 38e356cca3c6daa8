import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from './engine/index.ts';
import { toJsonRpc, toRestReply } from '../errors/index.ts';

/** A response for uWS: status, headers and a ready body. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const statusLines = new Map<number, string>();
export const statusLine = (status: number): string => {
  let line = statusLines.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? ''}`.trim();
    statusLines.set(status, line);
  }
  return line;
};

export const JSON_TYPE = 'application/json; charset=utf-8';

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** The spec's REST error envelope with the status of the error's code, stamped `nowMs` (from the injected clock). */
export function errorReply(err: unknown, nowMs: number, status?: number): Reply {
  const encoded = toRestReply(err, nowMs, status);
  return jsonReply(encoded.status, encoded.body);
}

/** The JSON-RPC error body /mcp answers with, with the status of the error's code. */
export function rpcErrorReply(err: unknown, status?: number): Reply {
  const encoded = toJsonRpc(err, status);
  return jsonReply(encoded.status, encoded.body);
}

/**
 * Writes a reply unless the client went away. Always corks: callers may be past an `await`.
 * `extra` headers (rate limit, CORS) are written before the reply's own.
 */
export function send(res: Pick<HttpResponse, 'cork' | 'writeStatus' | 'writeHeader' | 'end'>, state: { aborted: boolean }, reply: Reply, extra: Record<string, string> = {}): void {
  if (state.aborted) return;
  state.aborted = true;
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    for (const key in extra) res.writeHeader(key, extra[key]!);
    for (const key in reply.headers) res.writeHeader(key, reply.headers[key]!);
    res.end(reply.body);
  });
}

/**
 * Attaches the abort handler uWS requires before any await. `state.aborted` turns true (and the
 * controller aborts) when the client goes away; `send` also sets it once the reply is written.
 */
export function watchAbort(res: HttpResponse): { state: { aborted: boolean }; controller: AbortController } {
  const state = { aborted: false };
  const controller = new AbortController();
  res.onAborted(() => {
    state.aborted = true;
    controller.abort();
  });
  return { state, controller };
}
