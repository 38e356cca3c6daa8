/**
 * The agent as an MCP server, on the MCP TypeScript SDK v2 (`@modelcontextprotocol/server`), which
 * speaks both protocol eras from one server definition. `createServerFace` builds a fresh low-level
 * SDK Server per call: /mcp serves every HTTP request with its own server (stateless: a shared one
 * would leak replies between clients), and stdio uses one per connection.
 *
 * Eras, negotiated per request (see http-face.ts and docs/mcp-server.md, "Protocol eras"):
 * - 2025-era clients (protocol 2024-11-05 … 2025-11-25) open with `initialize` and send
 *   `MCP-Protocol-Version` on later requests; each request is served alone (no session id), so an
 *   `initialize` answers with our capabilities and the following requests need nothing from it.
 * - 2026-07-28 clients send no handshake: every request carries its protocol version, client info
 *   and capabilities in `_meta` (`io.modelcontextprotocol/*`, mirrored in headers); they may probe
 *   with `server/discover`, which the SDK answers from the capabilities declared here; results carry
 *   `resultType` and our identity in `_meta`. `logging/setLevel` and `ping` do not exist there.
 * The handlers below are era-blind: the SDK encodes their results for the era of the request.
 *
 * Tools: `chat_with_agent { message, sessionId? }` (no sessionId: a fresh unnamed session, removed after
 * the reply, or once idle if the client never came back for it) and `reset_conversation { sessionId? }`; optionally the connected tool servers'
 * tools. Resource: the agent's card. A `chat_with_agent` call with a `progressToken` streams the
 * reply as `notifications/progress` messages, one per chunk (both eras), every one sent before the result.
 *
 * Questions through elicitation: when a `chat_with_agent` turn waits for a person (an approval, a tool
 * server's form, a sampling request) and the caller declared form elicitation and may answer (`mayApprove`),
 * each question is asked of it as questions.ts maps it: a 2026-07-28 request answers `input_required`
 * rounds (approval-rounds.ts); a 2025-era client on a connection that keeps its server (stdio) gets
 * `elicitation/create` and its answer comes back to that server; a 2025-era client over HTTP gets
 * `elicitation/create` on the call's stream through `outOfBand`, and its answer, a POST of its own, is
 * applied wherever it arrives (legacy-approvals.ts). A question answered elsewhere first (REST, WebSocket,
 * timeout) keeps that answer, and a 2025-era client's open question about it is withdrawn with
 * `notifications/cancelled`.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type CallToolResult,
  type InputRequiredResult,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { createApprovalRounds } from './approval-rounds.ts';
import { createLegacyApprovals, type AnswerTo, type AskedOutOfBand } from './legacy-approvals.ts';
import { answerOf, formOf, type FormQuestion } from './questions.ts';
import type { FaceKey } from './seal.ts';
import { z } from 'zod';
import {
  DEFAULT_SESSION,
  QUESTION_ANSWERED,
  QUESTION_ASKED,
  answerOfFrame,
  questionOfFrame,
  type AgentFrame,
  type TurnWaiter,
} from '../agent/index.ts';
import { LOCAL_SESSIONS, type SessionAccess } from '../auth/index.ts';
import type { AgentCommands, AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { IdSource } from '../clock.ts';
import type { McpCommands } from '../tools/index.ts';
import { toErrorBody } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { hopsOf, invalidHops } from '../tools/hops.ts';
import { selfCapability } from '../tools/mcp/self-connection.ts';
import { sessionIdSchema, unnamedSessionId, type SessionKey } from '../session-id.ts';

function inputSchemaOf(schema: z.ZodType): Tool['inputSchema'] {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema) as Tool['inputSchema'] & { $schema?: string };
  return json;
}

export interface AgentCard {
  name: string;
  description?: string;
  version: string;
  model: string;
}

/** The bus as the agent's MCP face uses it: agent commands, the connected tools, and reply chunks. */
export type FaceBus = Pick<
  Bus<AgentCommands & Pick<McpCommands, 'mcp.modelTools' | 'mcp.callModelTool'>, AgentEvents>,
  'execute' | 'on'
>;

export interface ServerFaceDeps {
  bus: FaceBus;
  log: Logger;
  ids: IdSource;
  waiter: TurnWaiter;
  card: AgentCard;
  exposeTools: boolean;
  maxHops: number;
  /** Seals what the face hands to clients (requestState, session ids, answer ids); see seal.ts. */
  key: FaceKey;
  /**
   * This service's id, declared as an experimental capability so that agentd, connecting to a tool
   * server, can tell it reached itself (src/tools/mcp/self-connection.ts).
   */
  serviceId?: string;
}

export const CARD_URI = 'agentd://agent/card';

/**
 * How a server of the face serves. `persistent`: it serves a whole connection (stdio), so a 2025-era
 * client can be asked with `elicitation/create`. `mayApprove`: the caller may answer approvals (the
 * `approve` scope; default: `persistent`, the operator's own desktop client). `outOfBand`: a 2025-era
 * HTTP client that declared form elicitation (its session id says so): a question is sent on the
 * stream of the request `relatedRequestId` and answered by a later POST (legacy-approvals.ts).
 */
export interface ServerOptions {
  persistent?: boolean;
  mayApprove?: boolean;
  outOfBand?: (
    question: FormQuestion,
    answerTo: AnswerTo,
    relatedRequestId: string | number,
  ) => Promise<AskedOutOfBand>;
}

const chatInput = z.strictObject({
  message: z.string().min(1).describe('The message for the agent'),
  sessionId: sessionIdSchema.optional().describe('Conversation to continue (kept between calls)'),
});
const resetInput = z.strictObject({ sessionId: sessionIdSchema.optional().describe('Conversation to clear') });

/** The agent's own tools; their input schemas are the zod schemas that check the calls. */
const OWN_TOOLS: Tool[] = [
  {
    name: 'chat_with_agent',
    description: 'Send a message to the agent and get its reply. Without sessionId each call is a fresh conversation.',
    inputSchema: inputSchemaOf(chatInput),
  },
  {
    name: 'reset_conversation',
    description: 'Clear the history of a conversation (default: the default conversation).',
    inputSchema: inputSchemaOf(resetInput),
  },
];

const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: value }],
  ...(isError && { isError }),
});

function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const result = schema.safeParse(args ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments: ${problems}`);
}

/** The hop count of a request's `_meta`; a malformed one is invalid params, as on /a2a (src/tools/hops.ts). */
function hopsIn(meta: Record<string, unknown> | undefined): number {
  const hops = hopsOf(meta);
  if (hops === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, invalidHops('_meta'));
  return hops;
}

export function createServerFace(deps: ServerFaceDeps) {
  const { bus, card } = deps;
  const approvalRounds = createApprovalRounds({ bus, log: deps.log, key: deps.key });
  const legacyApprovals = createLegacyApprovals({ bus, log: deps.log, key: deps.key });

  async function modelTools(): Promise<Tool[]> {
    if (!deps.exposeTools) return [];
    const tools = await bus.execute('mcp.modelTools', {});
    return tools
      .filter((t) => !OWN_TOOLS.some((own) => own.name === t.name))
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters as Tool['inputSchema'] }));
  }

  /**
   * Asks the client each question of the turn `correlationId` that a form can ask (see the contracts); a
   * question answered elsewhere first is withdrawn (`notifications/cancelled`).
   */
  function askQuestions(
    ctx: ServerContext,
    correlationId: string,
    sessionId: SessionKey,
    outOfBand: ServerOptions['outOfBand'],
  ): () => void {
    const withdraw = new Map<string, () => void>();
    const asked = (frame: AgentFrame) => {
      const q = questionOfFrame(frame);
      const form = q && formOf(q);
      if (!q || !form) return;
      if (outOfBand) {
        outOfBand(form, { sessionId, callId: q.id, kind: q.kind }, ctx.mcpReq.id)
          .then((out) => withdraw.set(q.id, () => void out.withdraw('answered elsewhere').catch(() => undefined)))
          .catch((err: unknown) => deps.log.debug({ err, id: q.id }, 'question through elicitation not asked'));
        return;
      }
      const asking = new AbortController();
      withdraw.set(q.id, () => asking.abort('answered elsewhere'));
      void ctx.mcpReq
        .elicitInput({ mode: 'form', ...form }, { signal: AbortSignal.any([ctx.mcpReq.signal, asking.signal]) })
        .then(async (answer) => {
          await bus.execute(
            'agent.answer',
            { sessionId, id: q.id, answer: answerOf(q, answer), by: 'mcp-elicitation' },
            { sessionId },
          );
        })
        .catch((err: unknown) => deps.log.debug({ err, id: q.id }, 'question through elicitation not answered'));
    };
    const answered = (frame: AgentFrame) => {
      const a = answerOfFrame(frame);
      if (!a || a.by === 'mcp-elicitation') return;
      withdraw.get(a.id)?.();
      withdraw.delete(a.id);
    };
    const offs = [
      ...QUESTION_ASKED.map((name) =>
        bus.on(
          `agent.${name}`,
          (e) => e.correlationId === correlationId && asked({ event: name, data: e.payload } as AgentFrame),
        ),
      ),
      ...QUESTION_ANSWERED.map((name) =>
        bus.on(
          `agent.${name}`,
          (e) => e.correlationId === correlationId && answered({ event: name, data: e.payload } as AgentFrame),
        ),
      ),
    ];
    return () => offs.forEach((off) => off());
  }

  /**
   * `chat_with_agent`; questions are asked of a client that declared elicitation as the file's comment says
   * (`input_required` rounds for a 2026-07-28 request, `elicitation/create` for a 2025-era one).
   */
  async function chat(
    args: unknown,
    meta: Record<string, unknown> | undefined,
    ctx: ServerContext,
    sessions: SessionAccess,
    server: Server,
    options: ServerOptions,
  ): Promise<CallToolResult | InputRequiredResult> {
    const { persistent = false, mayApprove = persistent } = options;
    const { signal } = ctx.mcpReq;
    const { message, sessionId: requested } = parseArgs(chatInput, args);
    const hops = hopsIn(meta);
    if (hops > deps.maxHops) {
      return text(
        `Refused: this call has passed through ${hops} agents; the limit is ${deps.maxHops} (server.mcp.maxHops).`,
        true,
      );
    }
    const modern = ctx.mcpReq.envelope !== undefined;
    const asksClient =
      mayApprove && (options.outOfBand !== undefined || server.getClientCapabilities()?.elicitation !== undefined);
    const rounds = modern && asksClient ? approvalRounds : undefined;
    const state = rounds?.stateOf(ctx);
    if (state && !sessions.sees(state.sessionId))
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState');
    const sessionId = state?.sessionId ?? sessions.key(requested ?? unnamedSessionId(deps.ids()));
    const correlationId = state?.correlationId ?? deps.ids();
    const temporary = state?.temporary ?? requested === undefined;
    const progressToken = meta?.progressToken as string | number | undefined;
    let progress = 0;
    // The chunks' notifications go out one after another, all before the result (awaited below).
    let notified = Promise.resolve();
    const offChunk =
      progressToken === undefined
        ? undefined
        : bus.on('agent.chunk', (e) => {
            if (e.correlationId !== correlationId) return;
            const params = { progressToken, progress: ++progress, message: e.payload.content };
            notified = notified
              .then(() => ctx.mcpReq.notify({ method: 'notifications/progress', params }))
              .catch(() => undefined);
          });
    const offQuestions =
      !modern && asksClient ? askQuestions(ctx, correlationId, sessionId, options.outOfBand) : undefined;
    const onAbort = () => void bus.execute('agent.cancel', { sessionId }).catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    let detached = false;
    try {
      const answered = state && rounds ? await rounds.answer(state, ctx) : [];
      const reply = state
        ? (
            await deps.waiter.rejoin({
              correlationId,
              sessionId,
              ...(state.turnId !== undefined && { turnId: state.turnId }),
            })
          ).reply
        : deps.waiter.ask(
            {
              sessionId,
              content: message,
              hops,
              ...(sessions.quota && { quota: sessions.quota }),
              ...(temporary && { unnamed: true }),
            },
            rounds ? { correlationId, detachable: true } : { correlationId, signal },
          );
      const turnId = () => state?.turnId ?? deps.waiter.turnOf(correlationId);
      const waiting = rounds && (await rounds.next({ sessionId, correlationId, turnId }, reply, answered));
      if (rounds && waiting) {
        detached = true; // the turn goes on waiting; the client's retry follows it
        return await rounds.ask(waiting, {
          sessionId,
          correlationId,
          temporary,
          ...(waiting[0] && { turnId: waiting[0].question.turnId }),
        });
      }
      const response = await reply;
      await notified;
      return text(response.content);
    } catch (err) {
      return text(`The agent failed: ${toErrorBody(err).message}`, true);
    } finally {
      offChunk?.();
      offQuestions?.();
      signal.removeEventListener('abort', onAbort);
      if (temporary && !detached) await bus.execute('agent.deleteSession', { sessionId }).catch(() => undefined);
    }
  }

  async function callExposed(
    server: Server,
    name: string,
    args: unknown,
    meta: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    if (!deps.exposeTools) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const known = (await bus.execute('mcp.modelTools', {})).some((t) => t.name === name);
    if (!known) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const outcome = await bus.execute('mcp.callModelTool', { name, args: args ?? {}, signal, hops: hopsIn(meta) + 1 });
    const data = outcome.result as Partial<CallToolResult> | undefined;
    // Encoded for the request's era (a non-object structuredContent is wrapped for 2025-era clients).
    if (outcome.success && Array.isArray(data?.content))
      return server.projectCallToolResult(data as CallToolResult, undefined);
    return text(outcome.text, !outcome.success);
  }

  /**
   * A new MCP server with every handler, acting on the sessions `sessions` reaches; cheap enough to
   * build per request. `persistent`: it serves a whole connection (stdio), so it may ask the client
   * to approve tool calls through elicitation (see the contracts).
   */
  function newServer(sessions: SessionAccess = LOCAL_SESSIONS, options: ServerOptions = {}): Server {
    const server = new Server(
      { name: card.name, version: card.version },
      {
        capabilities: {
          tools: {},
          resources: {},
          logging: {},
          ...(deps.serviceId !== undefined && { experimental: selfCapability(deps.serviceId) }),
        },
        requestState: { verify: approvalRounds.verify },
        ...(card.description !== undefined && { instructions: card.description }),
      },
    );
    server.setRequestHandler('tools/list', async () => ({ tools: [...OWN_TOOLS, ...(await modelTools())] }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args, _meta: meta } = request.params;
      switch (name) {
        case 'chat_with_agent':
          return chat(args, meta, ctx, sessions, server, options);
        case 'reset_conversation': {
          const id = parseArgs(resetInput, args).sessionId ?? DEFAULT_SESSION;
          const sessionId = sessions.key(id);
          await bus.execute('agent.reset', { sessionId }, { sessionId });
          return text(`Conversation ${id} reset.`);
        }
        default:
          return callExposed(server, name, args, meta, ctx.mcpReq.signal);
      }
    });
    server.setRequestHandler('resources/list', () => ({
      resources: [
        { uri: CARD_URI, name: 'agent-card', title: `${card.name} agent card`, mimeType: 'application/json' },
      ],
    }));
    server.setRequestHandler('resources/read', async (request) => {
      if (request.params.uri !== CARD_URI)
        throw new ResourceNotFoundError(request.params.uri, `Unknown resource: ${request.params.uri}`);
      const tools = (await bus.execute('mcp.modelTools', {})).map((t) => t.name);
      const body = {
        ...card,
        tools,
        mcpTools: [...OWN_TOOLS.map((t) => t.name), ...(await modelTools()).map((t) => t.name)],
      };
      return { contents: [{ uri: CARD_URI, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
    });
    server.onerror = (err) => deps.log.debug({ err }, 'mcp server face error');
    return server;
  }

  return { newServer, legacyApprovals, log: deps.log };
}
export type ServerFace = ReturnType<typeof createServerFace>;
