import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { SessionAccess } from '../auth/index.ts';
import type { Caller } from './face-types.ts';
import { messagesOf } from './legacy-approvals.ts';
import type { ServerFace } from './server-face.ts';

export interface McpExchange {
  response: Response;
  /** Closes this request's server and transport; call once the response is written or aborted. */
  close(): Promise<void>;
}

const callsTool = (body: unknown): boolean => messagesOf(body).some((m) => m.method === 'tools/call');
/** `tasks/result` streams: the task's status notifications, and questions for an eliciting client (tasks.ts). */
const awaitsTask = (body: unknown): boolean => messagesOf(body).some((m) => m.method === 'tasks/result');

const refusedAnswer = () =>
  Response.json(
    { jsonrpc: '2.0', id: null, error: { code: -32602, message: 'Invalid or expired approval answer' } },
    { status: 400 },
  );

const wantsProgress = (body: unknown): boolean =>
  messagesOf(body).some((m) => m.params?._meta?.progressToken !== undefined);

/**
 * MCP Streamable HTTP, stateless, both eras (docs/mcp-server.md, "Protocol eras") told apart by the SDK's
 * `isLegacyRequest`: 2026-07-28 requests go to its modern handler; a 2025-era one gets a fresh server and
 * transport, SSE only for progress, an eliciting client's tool call or a `tasks/result`. `parsedBody`: undefined when absent or
 * not JSON (the transport then answers parse errors the MCP way).
 */
export function createHttpFace(face: ServerFace) {
  /** What each in-flight modern request's principal reaches and may do, keyed by its Request. */
  const callers = new WeakMap<Request, { sessions: SessionAccess } & Caller>();
  const modern = createMcpHandler(
    ({ requestInfo }) => {
      const caller = requestInfo && callers.get(requestInfo);
      // Fails closed: a server is never built without the caller's sessions.
      if (!caller) throw new Error('mcp: a modern request without its principal sessions');
      return face.newServer(caller.sessions, { mayApprove: caller.mayApprove, admin: caller.admin });
    },
    { legacy: 'reject', onerror: (err) => face.log.debug({ err }, 'mcp modern request refused or failed') },
  );

  return {
    /** `sessions`: what the request's principal reaches; `caller`: what it may answer. */
    async handle(request: Request, parsedBody: unknown, sessions: SessionAccess, caller: Caller): Promise<McpExchange> {
      if (!(await isLegacyRequest(request, parsedBody))) {
        callers.set(request, { sessions, ...caller });
        const response = await modern.fetch(request, parsedBody === undefined ? {} : { parsedBody });
        // The modern handler closes each exchange's server itself.
        return {
          response,
          close: () => {
            callers.delete(request);
            return Promise.resolve();
          },
        };
      }
      const legacy = face.legacyApprovals;
      const answered = await legacy.answer(parsedBody, sessions, caller);
      if (answered !== undefined)
        return {
          response: answered === 'applied' ? new Response(null, { status: 202 }) : refusedAnswer(),
          close: () => Promise.resolve(),
        };
      const { elicits, apps } = await legacy.declared(request.headers.get('mcp-session-id'));
      // No sessionIdGenerator: stateless mode.
      const transport = new WebStandardStreamableHTTPServerTransport({
        enableJsonResponse:
          !wantsProgress(parsedBody) && !(elicits && callsTool(parsedBody)) && !awaitsTask(parsedBody),
      });
      const server = face.newServer(sessions, {
        ...caller,
        ...(apps && { apps }),
        ...(elicits && {
          outOfBand: (question, answerTo, relatedRequestId) =>
            legacy.ask((m) => transport.send(m, { relatedRequestId }), question, answerTo),
        }),
      });
      await server.connect(transport);
      let response = await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
      const sessionId = response.ok ? await legacy.sessionIdFor(parsedBody) : undefined;
      if (sessionId !== undefined) {
        response = new Response(response.body, response);
        response.headers.set('Mcp-Session-Id', sessionId);
        response.headers.set('Access-Control-Expose-Headers', 'Mcp-Session-Id');
      }
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
