import type { ExecutionResult, ServerRecord, ToolRecord } from '../conversation/records.ts';
import type { ModelTool, ModelToolOutcome } from '../conversation/tool-shapes.ts';
import type { A2aAgentConfig, McpServerConfig } from '../config/schema.ts';
import type { McpLogLevel } from '../config/server-features.ts';
import type { Attached } from '../conversation/attachments.ts';
import type { ElicitTarget, Sampler } from './server-asks.ts';
import type { PromptRecord, PromptResult, ResourceContents, ResourceList } from '../conversation/mcp-records.ts';

/** Records and tool shapes whose schemas src/conversation owns. */
export type { ExecutionResult, ServerRecord, ToolRecord, ModelTool, ModelToolOutcome };
export type { PromptRecord, PromptResult, ResourceContents, ResourceList };
export type {
  ElicitationAnswer,
  ElicitationAsk,
  Elicitor,
  Sampler,
  SamplingOptions,
  SamplingReply,
  SamplingRequest,
} from './server-asks.ts';
export { SamplingRefused } from './server-asks.ts';

/** Where a call's progress goes: the session (key) whose watchers get `toolProgress` frames, and the call. */
export interface ProgressTarget {
  sessionId: string;
  /** Absent for a direct execution (`…/execute`). */
  turnId?: string;
  callId: string;
}

/** A resource a message attaches, and a prompt it sends (both resolved by `mcp.attach`). */
export interface AttachRequest {
  resources?: { serverId: string; uri: string }[];
  prompt?: { serverId: string; name: string; arguments?: Record<string, unknown> };
}

/** A principal's sign-in to one server (`mcp.signIn`). */
export interface SignInRecord {
  serverId: string;
  signedIn: boolean;
  authorizationUrl?: string;
}

/** Both ways assignable, or this type does not compile: the config's server `type` lists exactly the record's. */
type Same<A extends B, B extends C, C = A> = [A, B, C];
export type ServerTypeAgrees = Same<McpServerConfig['type'], ServerRecord['type']>;

export type McpCommands = {
  'mcp.listServers': { payload: Record<string, never>; result: ServerRecord[] };
  /** Resolves once connected; rejects with an AppError (the server stays listed as `error`). */
  'mcp.connectServer': { payload: { name: string; config: McpServerConfig }; result: ServerRecord };
  /** Adds a remote A2A agent at runtime, like `mcp.connectServer` (same URL policy and rules). */
  'mcp.connectA2aAgent': { payload: { name: string; config: A2aAgentConfig }; result: ServerRecord };
  'mcp.removeServer': { payload: { serverId: string }; result: ServerRecord };
  'mcp.restartServer': { payload: { serverId: string }; result: ServerRecord };
  'mcp.listTools': { payload: { serverId: string }; result: ToolRecord[] };
  /**
   * Validates `args` against the tool's inputSchema; throws SERVER_NOT_FOUND, TOOL_NOT_FOUND, INVALID_REQUEST,
   * TOOL_EXECUTION_FAILED. `principal` (`''` the unnamed one): whose tokens an `oauth.per: principal` server gets.
   */
  'mcp.executeTool': {
    payload: { serverId: string; toolName: string; args: unknown; progress?: ProgressTarget; principal?: string };
    result: ExecutionResult;
  };
  /** Tools offered to the model right now. */
  'mcp.modelTools': { payload: Record<string, never>; result: ModelTool[] };
  /**
   * Calls a tool by its model-visible name; never throws for tool failures. `hops`: the call's agent-to-agent hop
   * count (hops.ts). `elicit` and `sampler` answer what the server asks during the call (absent: declined, refused).
   */
  'mcp.callModelTool': {
    payload: {
      name: string;
      args: unknown;
      signal?: AbortSignal;
      hops?: number;
      progress?: ProgressTarget;
      elicit?: ElicitTarget;
      sampler?: Sampler;
    };
    result: ModelToolOutcome;
  };
  /** A server's resources and resource templates (empty when it offers none); SERVER_NOT_FOUND. */
  'mcp.listResources': { payload: { serverId: string }; result: ResourceList };
  /** A resource's contents (binary as base64), at most the server's maxResultBytes; TOOL_EXECUTION_FAILED. */
  'mcp.readResource': { payload: { serverId: string; uri: string }; result: ResourceContents };
  /** (Un)subscribes `subscriber` (a principal's name) to a resource's updates: `mcp.resourceUpdated` events. */
  'mcp.subscribeResource': {
    payload: { serverId: string; uri: string; subscribe: boolean; subscriber: string };
    result: { serverId: string; uri: string; subscribed: boolean };
  };
  'mcp.listPrompts': { payload: { serverId: string }; result: PromptRecord[] };
  /** New roots for a server whose config lists `roots`, told to it; INVALID_REQUEST otherwise. */
  'mcp.setRoots': { payload: { serverId: string; roots: string[] }; result: { serverId: string; roots: string[] } };
  /** A prompt's messages; a missing required argument is MISSING_FIELD (details.field), an unknown prompt INVALID_REQUEST. */
  'mcp.getPrompt': { payload: { serverId: string; name: string; args: unknown }; result: PromptResult };
  /** Reads the resources and gets the prompt a message names, as the model will be given them. */
  'mcp.attach': { payload: AttachRequest; result: Attached };
  /**
   * The browser's return from an OAuth sign-in: checks `state`, exchanges `code`, stores the tokens; resolves with
   * the server's record once reconnected (`principal`: a principal's own sign-in, the server left as it was).
   * INVALID_REQUEST for an unknown or expired state, AGENT_ERROR when the exchange or the connection fails.
   */
  'mcp.oauthCallback': {
    payload: { state: string; code: string; iss?: string };
    result: { server: ServerRecord; principal: boolean };
  };
  /**
   * A principal's own sign-in to an `oauth.per: principal` server: `mcp.signIn` begins it (the URL, or signed in
   * already), `mcp.signInStatus` tells, `mcp.signOut` drops its tokens. INVALID_REQUEST for other servers.
   */
  'mcp.signIn': { payload: { serverId: string; principal: string }; result: SignInRecord };
  'mcp.signInStatus': { payload: { serverId: string; principal: string }; result: SignInRecord };
  'mcp.signOut': { payload: { serverId: string; principal: string }; result: SignInRecord };
};

export type McpEvents = {
  /** Every status change of a server (sent to WebSocket clients as `mcpServerStatus`). */
  'mcp.serverStatus': ServerRecord;
  /** The model-visible catalogue changed (connect, disconnect, tools/list_changed). */
  'mcp.toolsChanged': { count: number };
  /** A call's progress (`toolProgress` frames to the session's watchers; never stored). */
  'mcp.toolProgress': ProgressTarget & {
    serverId: string;
    toolName: string;
    progress: number;
    total?: number;
    message?: string;
  };
  /** A subscribed resource changed (`resourceUpdated`, to every connection). */
  'mcp.resourceUpdated': { serverId: string; uri: string };
  /** A server's resource or prompt list changed (`mcpListChanged`, to every connection). */
  'mcp.listChanged': { serverId: string; list: 'resources' | 'prompts' };
  /** A server's log message (`mcpServerLog`: to admin connections and the inspector only). */
  'mcp.serverLog': { serverId: string; level: McpLogLevel; logger?: string; data: unknown };
};
