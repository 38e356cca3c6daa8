import type { ExecutionResult, ServerRecord, ToolRecord } from '../conversation/records.ts';
import type { ModelTool, ModelToolOutcome } from '../conversation/tool-shapes.ts';
import type { McpServerConfig } from '../config/schema.ts';

/** The records of this component, whose schemas src/conversation/records.ts owns. */
export type { ExecutionResult, ServerRecord, ToolRecord };

/** Both ways assignable, or this type does not compile: the config's server `type` lists exactly the record's. */
type Same<A extends B, B extends C, C = A> = [A, B, C];
export type ServerTypeAgrees = Same<McpServerConfig['type'], ServerRecord['type']>;

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
  /**
   * The browser's return from an OAuth sign-in (src/tools/oauth-client.ts): checks `state`, exchanges `code`,
   * stores the tokens and reconnects the server; resolves with its record once connected. INVALID_REQUEST for an
   * unknown or expired state, AGENT_ERROR when the exchange or the connection fails.
   */
  'mcp.oauthCallback': { payload: { state: string; code: string }; result: ServerRecord };
};

export type McpEvents = {
  /** Every status change of a server (sent to WebSocket clients as `mcpServerStatus`). */
  'mcp.serverStatus': ServerRecord;
  /** The model-visible catalogue changed (connect, disconnect, tools/list_changed). */
  'mcp.toolsChanged': { count: number };
};
