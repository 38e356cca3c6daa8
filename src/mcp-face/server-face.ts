/**
 * The agent as an MCP server (SDK v2): era-blind handlers, the SDK encodes each result for its request's era.
 * Tools: `chat_with_agent` (chat.ts), `reset_conversation`, and with `exposeTools` the tool servers' tools (their
 * MCP Apps passed on: apps.ts); resources: the agent's card, and the `ui://` apps of the exposed tools. `newServer` is per HTTP request (a shared one would leak replies between
 * clients) or per stdio connection.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/server';
import { DEFAULT_SESSION } from '../agent/index.ts';
import { LOCAL_SESSIONS, type SessionAccess } from '../auth/index.ts';
import { selfCapability } from '../conversation/hops.ts';
import { createApprovalRounds } from './approval-rounds.ts';
import { declaresApps, exposedTool, readExposedApp } from './apps.ts';
import { chat, mayAsk } from './chat.ts';
import type { ServerFaceDeps, ServerOptions } from './face-types.ts';
import { createLegacyApprovals } from './legacy-approvals.ts';
import { CARD_URI, hopsIn, OWN_TOOLS, parseArgs, resetInput, text } from './own-tools.ts';
import { TASKS_EXTENSION } from './task-extension.ts';
import { createTasks, type TaskDeps } from './tasks.ts';

/** The tasks capability of protocol revision 2025-11-25 (the SDK leaves it out of a 2026-07-28 answer). */
const TASKS = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

export function createServerFace(deps: ServerFaceDeps & TaskDeps) {
  const { bus, card } = deps;
  const approvalRounds = createApprovalRounds(deps);
  const legacyApprovals = createLegacyApprovals(deps);
  const tasks = createTasks(deps);
  const chatFace = { deps, approvalRounds, tasks };

  /** The exposed tools; `withAppOnly`: those only MCP Apps may call too (apps.ts). */
  async function modelTools(withAppOnly = false): Promise<Tool[]> {
    if (!deps.exposeTools) return [];
    const tools = await bus.execute('mcp.modelTools', { withAppOnly });
    return tools.filter((t) => !OWN_TOOLS.some((own) => own.name === t.name)).map(exposedTool);
  }

  async function callExposed(
    server: Server,
    name: string,
    args: unknown,
    meta: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const known =
      deps.exposeTools && (await bus.execute('mcp.modelTools', { withAppOnly: true })).some((t) => t.name === name);
    if (!known) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const outcome = await bus.execute('mcp.callModelTool', { name, args: args ?? {}, signal, hops: hopsIn(meta) + 1 });
    const data = outcome.result as Partial<CallToolResult> | undefined;
    // Encoded for the request's era (a non-object structuredContent is wrapped for 2025-era clients).
    if (outcome.success && Array.isArray(data?.content))
      return server.projectCallToolResult(data as CallToolResult, undefined);
    return text(outcome.text, !outcome.success);
  }

  /** A new MCP server acting on the sessions `sessions` reaches; cheap enough to build per request. */
  function newServer(sessions: SessionAccess = LOCAL_SESSIONS, options: ServerOptions = {}): Server {
    const server = new Server(
      { name: card.name, version: card.version },
      {
        capabilities: {
          // A connection's own server (stdio) is told when tool servers connect later: see onToolsChanged.
          tools: options.persistent && deps.exposeTools ? { listChanged: true } : {},
          resources: {},
          logging: {},
          tasks: TASKS,
          extensions: { [TASKS_EXTENSION]: {} },
          ...(deps.serviceId !== undefined && { experimental: selfCapability(deps.serviceId) }),
        },
        requestState: { verify: approvalRounds.verify },
        ...(card.description !== undefined && { instructions: card.description }),
      },
    );
    server.setRequestHandler('tools/list', async (_request, ctx) => ({
      tools: [...OWN_TOOLS, ...(await modelTools(declaresApps(server, ctx, options)))],
    }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args, _meta: meta } = request.params;
      switch (name) {
        case 'chat_with_agent':
          return chat(chatFace, request.params, ctx, sessions, server, options);
        case 'reset_conversation': {
          const id = parseArgs(resetInput, args).sessionId ?? DEFAULT_SESSION;
          const sessionId = sessions.key(id);
          await bus.execute('agent.reset', { sessionId });
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
      if (request.params.uri.startsWith('ui://')) return readExposedApp(deps, request.params.uri);
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
    tasks.register(server, sessions, {
      ...options,
      asks: () => mayAsk(server, options),
    });
    server.onerror = (err) => deps.log.debug({ err }, 'mcp server face error');
    return server;
  }

  /**
   * Calls `listener` whenever the tools `tools/list` answers change (a tool server connected, left or changed
   * its list); never when the tool servers' tools are not exposed. Returns the unsubscribe.
   */
  const onToolsChanged = (listener: () => void): (() => void) =>
    deps.exposeTools ? bus.on('mcp.toolsChanged', () => listener()) : () => undefined;

  return { newServer, onToolsChanged, legacyApprovals, log: deps.log };
}
export type ServerFace = ReturnType<typeof createServerFace>;
