/**
 * `/mcp` on the front end, through the face endpoint kit (src/http/face-endpoint.ts): POST only (else 405:
 * stateless), then the MCP face, its Response relayed. A tool call carrying this instance's INSTANCE_HEADER is
 * refused 403 (`reason: 'self-connection'`): it would loop. Refusals are JSON-RPC error bodies with the table's
 * status and the verdict's headers; the SDK answers a body that is not JSON (parse error, 415) itself.
 */
import { hasScope } from '../auth/index.ts';
import { INSTANCE_HEADER } from '../conversation/hops.ts';
import { AppError } from '../errors/index.ts';
import { MethodNotAllowed } from '../http/admission.ts';
import type { EngineRequest } from '../http/engine/index.ts';
import { faceEndpoint, jsonBody, type FaceCall, type FaceContext, type FaceMount } from '../http/face-endpoint.ts';
import { rateLimitError, rateLimitHeaders } from '../http/limits.ts';
import { rpcErrorReply } from '../http/respond.ts';
import type { HttpFace } from './http-face.ts';

export const MCP_PATH = '/mcp';
/** Streamable HTTP's request headers, allowed by the CORS preflight. */
const MCP_HEADERS = ['Accept', 'MCP-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'];

export interface McpMountDeps {
  face: HttpFace;
  /** This instance's id (refuses /mcp tool calls from itself). */
  instanceId: string;
}

/** The bytes as read and the JSON-RPC message(s) they hold (`undefined`: not JSON; the SDK answers that). */
type Body = { raw: Buffer; parsed: unknown };

/** The request as the SDK's transport reads it: a web Request with the body already read. */
function webRequest(req: EngineRequest, raw: Buffer, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const key in req.headers) headers.append(key, req.headers[key]!);
  return new Request(`http://${req.headers.host || 'localhost'}${MCP_PATH}`, {
    method: req.method.toUpperCase(),
    headers,
    body: new Uint8Array(raw),
    signal,
  });
}

/** Its own client may learn whom it reached (initialize, tools/list; src/tools/mcp/self-connection.ts), not call it. */
const selfCall = (req: EngineRequest, parsed: unknown, instanceId: string): boolean =>
  req.headers[INSTANCE_HEADER] === instanceId &&
  (Array.isArray(parsed) ? parsed : [parsed]).some((m) => (m as { method?: unknown } | null)?.method === 'tools/call');

export function createMcpEndpoint(deps: McpMountDeps, ctx: FaceContext) {
  const rejected = () => ctx.metrics?.rejected('mcp');
  const call = async ({ req, body, principal, sessions, ip, signal, headers }: FaceCall<void, Body>) => {
    if (selfCall(req, body.parsed, deps.instanceId))
      throw new AppError('FORBIDDEN', 'Refusing a tool call from this agentd instance to its own /mcp', {
        reason: 'self-connection',
      });
    if (Array.isArray(body.parsed) && body.parsed.length > 1) {
      // The admission took one point; a batch of n messages costs n.
      const batch = await ctx.limiter.consume(ip, body.parsed.length - 1);
      Object.assign(headers, rateLimitHeaders(batch));
      if (!batch.allowed) {
        rejected();
        throw rateLimitError(batch, 'requests from this address', 'server.limits.rest.points');
      }
    }
    const request = webRequest(req, body.raw, signal);
    const caller = { mayApprove: ctx.mayApprove(principal), admin: hasScope(principal, 'admin') };
    const exchange = await deps.face.handle(request, body.parsed, sessions, caller);
    return { kind: 'response' as const, response: exchange.response, close: () => exchange.close() };
  };
  const parsed = jsonBody('JSON-RPC message', 'any');
  return faceEndpoint<void, Body>(ctx, {
    name: 'mcp',
    allowHeaders: MCP_HEADERS,
    route: (_req, method) => {
      if (method !== 'POST') throw new MethodNotAllowed(method, MCP_PATH, 'POST');
    },
    encodeError: (err, status) => rpcErrorReply(err, status),
    onRefused: (error) => {
      if (error.code === 'RATE_LIMIT_EXCEEDED') rejected();
    },
    parse: (raw, req) => ({ raw, parsed: parsed(raw, req) }),
    call,
  });
}

/** `/mcp`: the agent served over MCP's Streamable HTTP. */
export const mcpMount = (deps: McpMountDeps): FaceMount => ({
  name: 'mcp',
  match: (path) => path === MCP_PATH,
  serve: (ctx) => createMcpEndpoint(deps, ctx),
});
