import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
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
 * MCP Streamable HTTP in stateless mode: a new server and transport for every request.
 * Replies are plain JSON unless the request asks for progress, which needs an SSE stream.
 * `parsedBody` is the already-parsed JSON body (undefined when absent or not JSON; the
 * transport then reads `request` itself and answers parse errors the MCP way).
 */
export function createHttpFace(face: ServerFace) {
  return {
    /** `sessions`: the sessions the request's principal reaches (src/auth/ownership.ts). */
    async handle(request: Request, parsedBody: unknown, sessions: SessionAccess): Promise<McpExchange> {
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
  };
}
export type HttpFace = ReturnType<typeof createHttpFace>;
