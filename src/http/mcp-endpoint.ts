import type { EngineRequest, EngineResponse } from './engine/index.ts';
import { AppError } from '../errors/index.ts';
import { INSTANCE_HEADER } from '../tools/index.ts';
import type { HttpFace } from '../mcp-face/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { MethodNotAllowed, requestFacts, type EndpointDeps } from './admission.ts';
import type { Principal } from '../auth/index.ts';
import { jsonOrUndefined, readBody, tooDeepError } from './body.ts';
import { rateLimitError, rateLimitHeaders, type WindowLimiter } from './limits.ts';
import { textTooDeep } from '../json-depth.ts';
import { relayResponse } from './relay.ts';
import { rpcErrorReply, send } from './respond.ts';

/** Streamable HTTP's request headers, allowed by the CORS preflight. */
const MCP_HEADERS = ['Accept', 'MCP-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'];

export interface McpEndpointDeps extends Omit<EndpointDeps, 'clock'> {
  metrics?: Pick<Metrics, 'rejected'>;
  face: HttpFace;
  /** Only then are approvals asked of the principal (through elicitation). */
  mayApprove: (principal: Principal) => boolean;
  /** The per-IP request window: a JSON-RPC batch takes one point per message. */
  limiter: WindowLimiter;
  instanceId: string;
}

/**
 * `/mcp`: the admission chain (POST only, else 405: stateless), then the MCP face, its Response relayed. A tool
 * call carrying this instance's INSTANCE_HEADER is refused 403 (`reason: 'self-connection'`): it would loop.
 * Refusals are JSON-RPC error bodies with the table's status and the verdict's headers.
 */
export function createMcpEndpoint(deps: McpEndpointDeps) {
  return (req: EngineRequest, res: EngineResponse): void => {
    const method = req.method.toUpperCase();
    const headers = new Headers();
    for (const key in req.headers) headers.append(key, req.headers[key]!);
    const ip = deps.clientIp(req);
    const body = method === 'POST' ? () => readBody(req, deps.maxBodyBytes) : undefined;

    const route = (): void => {
      if (method !== 'POST') throw new MethodNotAllowed(method, '/mcp', 'POST');
    };
    // Its own client may learn whom it reached (initialize, tools/list; src/tools/mcp/self-connection.ts).
    const selfCall = (parsed: unknown): boolean =>
      headers.get(INSTANCE_HEADER) === deps.instanceId &&
      (Array.isArray(parsed) ? parsed : [parsed]).some(
        (m) => (m as { method?: unknown } | null)?.method === 'tools/call',
      );

    let principal: string | undefined;
    const run = async () => {
      const facts = requestFacts(method, req.headers, ip, { allowHeaders: MCP_HEADERS });
      const verdict = await deps.admission.admit(facts, { route, body });
      if (verdict.outcome === 'refused') {
        if (verdict.error.code === 'RATE_LIMIT_EXCEEDED') deps.metrics?.rejected('mcp');
        return send(res, rpcErrorReply(verdict.error, verdict.status), verdict.headers);
      }
      if (verdict.outcome === 'preflight') return send(res, { status: 204, headers: {}, body: '' }, verdict.headers);
      principal = verdict.principal.name;
      const raw = verdict.body ?? Buffer.alloc(0);
      const text = raw.toString('utf8');
      if (textTooDeep(text)) return send(res, rpcErrorReply(tooDeepError('JSON-RPC message')), verdict.headers);
      const parsed = jsonOrUndefined(text); // the SDK answers a parse error itself
      if (selfCall(parsed)) {
        const refused = new AppError('FORBIDDEN', 'Refusing a tool call from this agentd instance to its own /mcp', {
          reason: 'self-connection',
        });
        return send(res, rpcErrorReply(refused), verdict.headers);
      }
      let replyHeaders = verdict.headers;
      if (Array.isArray(parsed) && parsed.length > 1) {
        // The admission took one point; a batch of n messages costs n.
        const batch = await deps.limiter.consume(ip, parsed.length - 1);
        replyHeaders = { ...replyHeaders, ...rateLimitHeaders(batch) };
        if (!batch.allowed) {
          deps.metrics?.rejected('mcp');
          return send(
            res,
            rpcErrorReply(rateLimitError(batch, 'requests from this address', 'server.limits.rest.points')),
            replyHeaders,
          );
        }
      }
      const request = new Request(`http://${req.headers.host || 'localhost'}/mcp`, {
        method,
        headers,
        body: new Uint8Array(raw),
        signal: res.signal,
      });
      const exchange = await deps.face.handle(
        request,
        parsed,
        deps.sessionsOf(verdict.principal, ip),
        deps.mayApprove(verdict.principal),
      );
      try {
        await relayResponse(res, exchange.response, replyHeaders);
      } finally {
        await exchange.close();
      }
    };
    run().catch((err: unknown) => {
      deps.log.error({ err, principal }, 'mcp request failed');
      send(res, rpcErrorReply(err));
    });
  };
}
