import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { AppError, toErrorBody } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { INSTANCE_HEADER, type HttpFace } from '../mcp/index.ts';
import type { Auth } from './auth.ts';
import { readBody } from './body.ts';
import type { Cors } from './cors.ts';
import { formatIp } from './ip.ts';
import { rateLimitError, rateLimitHeaders, type WindowLimiter } from './limits.ts';
import { jsonReply, send, statusLine, watchAbort, type Reply } from './respond.ts';

export interface McpEndpointDeps {
  face: HttpFace;
  log: Logger;
  cors: Cors;
  auth: Auth;
  limiter: WindowLimiter;
  maxBodyBytes: number;
  /** This instance's id: a request that carries it comes from ourselves (a loop). */
  instanceId: string;
  isHostAllowed: (host: string) => boolean;
}

/** HTTP status → JSON-RPC error (MCP clients read JSON-RPC, not the REST envelope). */
const HTTP_TO_RPC: Record<number, number> = { 400: -32600, 401: -32001, 403: -32001, 413: -32600, 429: -32000, 503: -32000 };

function rpcError(status: number, err: unknown, headers: Record<string, string> = {}): Reply {
  const { code, message, details } = toErrorBody(err);
  return jsonReply(status, { jsonrpc: '2.0', error: { code: HTTP_TO_RPC[status] ?? -32603, message, data: { code, ...details } }, id: null }, headers);
}

const SKIPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

/**
 * `/mcp` on the uWS front end: checks (Host, Origin, self-loop, auth, rate limit, body size),
 * then hands a web-standard Request to the MCP face and writes its Response back — buffered for
 * JSON, streamed for SSE.
 */
export function createMcpEndpoint(deps: McpEndpointDeps) {
  return (res: HttpResponse, req: HttpRequest): void => {
    const { state, controller } = watchAbort(res);
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const headers = new Headers();
    req.forEach((k, v) => headers.append(k, v));
    const host = headers.get('host') ?? '';
    const origin = headers.get('origin') ?? '';
    const ip = formatIp(res.getRemoteAddress());

    const refuse = (status: number, err: AppError) => send(res, state, rpcError(status, err));
    if (!deps.isHostAllowed(host)) return refuse(403, new AppError('FORBIDDEN', `Host "${host}" is not allowed`, { host }));
    if (!deps.cors.isAllowed(origin, host)) return refuse(403, new AppError('FORBIDDEN', 'Origin not allowed', { origin }));
    if (headers.get(INSTANCE_HEADER) === deps.instanceId) {
      return refuse(403, new AppError('FORBIDDEN', 'Refusing a connection from this agentd instance to its own /mcp', { reason: 'self-connection' }));
    }
    if (method !== 'POST') {
      // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
      return send(res, state, { ...rpcError(405, new AppError('INVALID_REQUEST', `Method ${method} not allowed on /mcp; use POST`)), headers: { Allow: 'POST', 'Content-Type': 'application/json' } });
    }

    const run = async () => {
      try {
        deps.auth(headers.get('authorization') ?? undefined);
      } catch (err) {
        return send(res, state, rpcError(401, err));
      }
      const limit = await deps.limiter.consume(ip);
      const limitHeaders = rateLimitHeaders(limit);
      if (!limit.allowed) return send(res, state, rpcError(429, rateLimitError(limit, 'requests per window')), limitHeaders);
      let raw: Buffer;
      try {
        raw = await readBody(res, deps.maxBodyBytes, Number(headers.get('content-length') ?? 0));
      } catch (err) {
        return send(res, state, rpcError(413, err), limitHeaders);
      }
      let parsed: unknown;
      try {
        parsed = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        parsed = undefined;
      }
      const request = new Request(`http://${host || 'localhost'}/mcp`, { method, headers, body: new Uint8Array(raw), signal: controller.signal });
      const exchange = await deps.face.handle(request, parsed);
      try {
        await writeResponse(res, state, exchange.response, limitHeaders);
      } finally {
        await exchange.close();
      }
    };
    run().catch((err: unknown) => {
      deps.log.error({ err }, 'mcp request failed');
      send(res, state, rpcError(500, err));
    });
  };
}

async function writeResponse(res: HttpResponse, state: { aborted: boolean }, response: Response, extra: Record<string, string>): Promise<void> {
  const headers: Record<string, string> = { ...extra };
  response.headers.forEach((value, key) => {
    if (!SKIPPED_HEADERS.has(key)) headers[key] = value;
  });
  const streaming = response.body !== null && (response.headers.get('content-type') ?? '').includes('text/event-stream');
  if (!streaming) {
    const body = Buffer.from(await response.arrayBuffer()).toString('utf8');
    return send(res, state, { status: response.status, headers, body });
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  if (state.aborted) return void (await reader.cancel());
  res.cork(() => {
    res.writeStatus(statusLine(response.status));
    for (const key in headers) res.writeHeader(key, headers[key]!);
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (state.aborted) return void (await reader.cancel());
    if (done) break;
    res.cork(() => void res.write(value));
  }
  state.aborted = true;
  res.cork(() => void res.end());
}
