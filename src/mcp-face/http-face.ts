import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { SessionAccess } from '../auth/index.ts';
import type { ServerFace } from './server-face.ts';

export interface McpExchange {
  response: Response;
  /** Closes this request's server and transport; call once the response is written or aborted. */
  close(): Promise<void>;
}

/** True when any JSON-RPC message of the body asks for progress notifications. */
function wantsProgress(body: unknown): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const meta = (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}

/**
 * MCP Streamable HTTP, stateless, both protocol eras; the era is decided per request by the SDK's
 * own classifier (`isLegacyRequest`: does the request carry the 2026-07-28 `_meta` envelope claim?).
 *
 * - 2025-era requests (no envelope: `initialize`, `tools/call` with `MCP-Protocol-Version:
 *   2025-…`, batches, empty or non-JSON bodies) get a new server and a session-less transport, as
 *   before: plain JSON replies unless a message asks for progress, which needs an SSE stream.
 * - 2026-07-28 requests (and `server/discover` probes) go to the SDK's modern handler with
 *   `legacy: 'reject'`; it validates the envelope against the headers, builds a server for the
 *   request from the same factory, answers JSON, or SSE once the handler sends progress.
 *
 * `parsedBody` is the already-parsed JSON body (undefined when absent or not JSON; the transport
 * then reads `request` itself and answers parse errors the MCP way).
 */
export function createHttpFace(face: ServerFace) {
  /** What each in-flight modern request's principal reaches and may do, keyed by its Request. */
  const callers = new WeakMap<Request, { sessions: SessionAccess; mayApprove: boolean }>();
  const modern = createMcpHandler(
    ({ requestInfo }) => {
      const caller = requestInfo && callers.get(requestInfo);
      // Fails closed: a server is never built without the caller's sessions.
      if (!caller) throw new Error('mcp: a modern request without its principal sessions');
      return face.newServer(caller.sessions, { mayApprove: caller.mayApprove });
    },
    { legacy: 'reject', onerror: (err) => face.log.debug({ err }, 'mcp modern request refused or failed') },
  );

  return {
    /** `sessions`: the sessions the request's principal reaches (src/auth/ownership.ts); `mayApprove`: it has the approve scope. */
    async handle(request: Request, parsedBody: unknown, sessions: SessionAccess, mayApprove: boolean): Promise<McpExchange> {
      if (!(await isLegacyRequest(request, parsedBody))) {
        callers.set(request, { sessions, mayApprove });
        const response = await modern.fetch(request, parsedBody === undefined ? {} : { parsedBody });
        // The modern handler closes each exchange's server itself (when its response ends or the request aborts).
        return {
          response,
          close: () => {
            callers.delete(request);
            return Promise.resolve();
          },
        };
      }
      const server = face.newServer(sessions);
      // No sessionIdGenerator: stateless mode.
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !wantsProgress(parsedBody) });
      await server.connect(transport);
      const response = await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
      return {
        response,
        close: async () => {
          await transport.close();
          await server.close();
        },
      };
    },
    /** Aborts the modern exchanges still in flight. */
    close: () => modern.close(),
  };
}
export type HttpFace = ReturnType<typeof createHttpFace>;
