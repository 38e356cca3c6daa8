import type { ExecutionResult, ServerRecord, ToolRecord } from '../conversation/records.ts';
import type { ModelTool, ModelToolOutcome } from '../conversation/tool-shapes.ts';
import type { A2aAgentConfig, McpServerConfig } from '../config/schema.ts';
import type { McpLogLevel } from '../config/server-features.ts';
import type { Attached } from '../conversation/attachments.ts';
import type { ToolApp } from '../conversation/tool-app.ts';
import type { ElicitTarget, Sampler } from './server-asks.ts';
import type { TaskHooks } from './server-asks.ts';
import type { PromptRecord, PromptResult, ResourceContents, ResourceList } from '../conversation/mcp-records.ts';

/** Records and tool shapes whose schemas src/conversation owns. */
export type { ExecutionResult, ServerRecord, ToolRecord, ModelTool, ModelToolOutcome };
export type { PromptRecord, PromptResult, ResourceContents, ResourceList };
export type * from './server-asks.ts';
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

/** `mcp.signIn`'s answer: with `binding` (never shown in a body) when a sign-in is pending; its callback needs it. */
export interface SignInBegun extends SignInRecord {
  binding?: { state: string; value: string };
}

/** Both ways assignable, or this type does not compile: the config's server `type` lists exactly the record's. */
type Same<A extends B, B extends C, C = A> = [A, B, C];
export type ServerTypeAgrees = Same<McpServerConfig['type'], ServerRecord['type']>;

/** The commands that change the tool servers at run time (a cluster shares them with every instance). */
export const TOOL_SERVER_COMMANDS = [
  'mcp.connectServer',
  'mcp.connectA2aAgent',
  'mcp.removeServer',
  'mcp.restartServer',
  'mcp.listServers',
] as const satisfies readonly (keyof McpCommands)[];

/** Contracts: in the handling file (service.ts, tool-calls.ts, sign-ins.ts, mcp/server-requests.ts). */
export type McpCommands = {
  'mcp.listServers': { payload: Record<string, never>; result: ServerRecord[] };
  'mcp.connectServer': { payload: { name: string; config: McpServerConfig }; result: ServerRecord };
  /** Adds a remote A2A agent at runtime, like `mcp.connectServer` (same URL policy and rules). */
  'mcp.connectA2aAgent': { payload: { name: string; config: A2aAgentConfig }; result: ServerRecord };
  'mcp.removeServer': { payload: { serverId: string }; result: ServerRecord };
  'mcp.restartServer': { payload: { serverId: string }; result: ServerRecord };
  'mcp.listTools': { payload: { serverId: string }; result: ToolRecord[] };
  /** `principal` (`''` the unnamed one): whose tokens an `oauth.per: principal` server gets. */
  'mcp.executeTool': {
    payload: { serverId: string; toolName: string; args: unknown; progress?: ProgressTarget; principal?: string };
    result: ExecutionResult;
  };
  /**
   * Tools offered to the model right now; `withAppOnly`: and those only MCP Apps may call (`_meta.ui.visibility`
   * without "model"), which `mcp.callModelTool` runs by name too (catalogue.ts).
   */
  'mcp.modelTools': { payload: { withAppOnly?: boolean }; result: ModelTool[] };
  /** By model-visible name; never throws for tool failures. `hops`: src/conversation/hops.ts; `elicit`, `sampler`: server-asks.ts. */
  'mcp.callModelTool': {
    payload: {
      /** The session the call is made for: its owner is the principal an `oauth.per: principal` server acts for. */
      sessionId?: string;
      name: string;
      args: unknown;
      signal?: AbortSignal;
      hops?: number;
      progress?: ProgressTarget;
      elicit?: ElicitTarget;
      sampler?: Sampler;
      /** A call run as a remote task: who hears it was created, and a task to resume (server-asks.ts). */
      task?: TaskHooks;
    };
    result: ModelToolOutcome;
  };
  'mcp.listResources': { payload: { serverId: string }; result: ResourceList };
  'mcp.readResource': { payload: { serverId: string; uri: string }; result: ResourceContents };
  /**
   * The MCP App `uri` of a server's tool, read now and checked as a call's is (mcp/app-resource.ts): the resource, or
   * a note saying why not (the server is not connected, its config says `apps: false`, ...). Never throws for those.
   */
  'mcp.readApp': { payload: { serverId: string; uri: string }; result: ToolApp };
  /** `subscriber`: a principal's name; updates arrive as `mcp.resourceUpdated`. */
  'mcp.subscribeResource': {
    payload: { serverId: string; uri: string; subscribe: boolean; subscriber: string };
    result: { serverId: string; uri: string; subscribed: boolean };
  };
  'mcp.listPrompts': { payload: { serverId: string }; result: PromptRecord[] };
  /** New roots for a server whose config lists `roots`, told to it; INVALID_REQUEST otherwise. */
  'mcp.setRoots': { payload: { serverId: string; roots: string[] }; result: { serverId: string; roots: string[] } };
  'mcp.getPrompt': { payload: { serverId: string; name: string; args: unknown }; result: PromptResult };
  /** Reads the resources and gets the prompt a message names, as the model will be given them. */
  'mcp.attach': { payload: AttachRequest; result: Attached };
  /** The browser's return from an OAuth sign-in; `binding`: the value a principal's sign-in was begun with. */
  'mcp.oauthCallback': {
    payload: { state: string; code: string; iss?: string; binding?: string };
    /** `principal`: whose sign-in it completed (absent: the server's own). */
    result: { server: ServerRecord; principal?: string };
  };
  /** A principal's own sign-in to an `oauth.per: principal` server: begin it, ask how it stands, drop its tokens. */
  'mcp.signIn': { payload: { serverId: string; principal: string }; result: SignInBegun };
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
