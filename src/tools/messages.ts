import type { ServerStatus } from '../../machines/mcp-server.machine.ts';
import type { ModelTool, ModelToolOutcome } from '../conversation/tool-shapes.ts';
import type { McpServerConfig } from '../config/schema.ts';

/** The spec's MCP server record. */
export interface ServerRecord {
  id: string;
  name: string;
  status: ServerStatus;
  type: McpServerConfig['type'];
  description?: string;
  /** Present when status is `error`. */
  error?: string;
  /** With instances sharing one Redis: this server's status on each live instance (src/cluster). */
  instances?: { instanceId: string; status: ServerStatus; error?: string }[];
}

/** The spec's tool record (server-side name). */
export interface ToolRecord {
  id: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The spec's tool execution result. */
export interface ExecutionResult {
  success: true;
  data: Record<string, unknown>;
  execution: { toolName: string; serverId: string; duration: number };
  timestamp: string;
}

/** The tool shapes the turn machine works with (src/conversation/tool-shapes.ts owns them). */
export type { ModelTool, ModelToolOutcome };

export type McpCommands = {
  'mcp.listServers': { payload: Record<string, never>; result: ServerRecord[] };
  /** Resolves once connected; rejects with an AppError (the server stays listed as `error`). */
  'mcp.connectServer': { payload: { name: string; config: McpServerConfig }; result: ServerRecord };
  'mcp.removeServer': { payload: { serverId: string }; result: ServerRecord };
  'mcp.restartServer': { payload: { serverId: string }; result: ServerRecord };
  'mcp.listTools': { payload: { serverId: string }; result: ToolRecord[] };
  /** Validates `args` against the tool's inputSchema; throws SERVER_NOT_FOUND, TOOL_NOT_FOUND, INVALID_REQUEST, TOOL_EXECUTION_FAILED. */
  'mcp.executeTool': { payload: { serverId: string; toolName: string; args: unknown }; result: ExecutionResult };
  /** Tools offered to the model right now. */
  'mcp.modelTools': { payload: Record<string, never>; result: ModelTool[] };
  /** Calls a tool by its model-visible name; never throws for tool failures. */
  /** `hops` is sent along as the call's agent-to-agent hop count (src/tools/hops.ts). */
  'mcp.callModelTool': { payload: { name: string; args: unknown; signal?: AbortSignal; hops?: number }; result: ModelToolOutcome };
};

export type McpEvents = {
  /** Every status change of a server (sent to WebSocket clients as `mcpServerStatus`). */
  'mcp.serverStatus': ServerRecord;
  /** The model-visible catalogue changed (connect, disconnect, tools/list_changed). */
  'mcp.toolsChanged': { count: number };
};
