/**
 * The REST routes the client calls, by method name: method, path (`:name` segments are path parameters), query
 * parameter names, and the body each takes (`json`: required, `json?`: optional, `ndjson`: a text body). Kept equal
 * to `/api/openapi.json` by test/int/client-openapi.test.ts (every operation is here or in NOT_IN_CLIENT, with the
 * same parameters and body); the types of each route's input and answer come from the server's own zod schemas
 * (route-types.ts). Plain data: the browser build carries no schema.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type BodyKind = 'json' | 'json?' | 'ndjson';

export interface RouteInfo {
  readonly method: HttpMethod;
  readonly path: string;
  readonly query?: readonly string[];
  readonly body?: BodyKind;
  /** The answer is text (YAML, NDJSON, Prometheus, an MCP App's html), not JSON. */
  readonly text?: true;
}

const OWNER = ['owner'] as const;

export const ROUTES = {
  health: { method: 'GET', path: '/api/health' },
  live: { method: 'GET', path: '/api/health/live' },
  ready: { method: 'GET', path: '/api/health/ready' },
  configYaml: { method: 'GET', path: '/api/config.yaml', text: true },
  openApi: { method: 'GET', path: '/api/openapi.json' },
  metrics: { method: 'GET', path: '/metrics', text: true },
  jwks: { method: 'GET', path: '/.well-known/jwks.json' },
  agentCard: { method: 'GET', path: '/.well-known/agent-card.json' },
  agUiCapabilities: { method: 'GET', path: '/ag-ui/capabilities' },

  messageSync: { method: 'POST', path: '/api/message-sync', body: 'json' },
  message: { method: 'POST', path: '/api/message', body: 'json' },
  reset: { method: 'POST', path: '/api/reset', body: 'json?' },

  listSessions: { method: 'GET', path: '/api/sessions', query: ['limit', 'cursor'] },
  history: { method: 'GET', path: '/api/sessions/:sessionId/history', query: ['owner', 'since'] },
  deleteSession: { method: 'DELETE', path: '/api/sessions/:sessionId', query: OWNER },
  cancel: { method: 'POST', path: '/api/sessions/:sessionId/cancel', query: OWNER },
  exportSession: {
    method: 'GET',
    path: '/api/sessions/:sessionId/export',
    query: ['owner', 'reasoning'],
    text: true,
  },
  importSession: { method: 'POST', path: '/api/sessions/import', body: 'ndjson' },
  forkSession: { method: 'POST', path: '/api/sessions/:sessionId/fork', query: OWNER, body: 'json' },
  compact: { method: 'POST', path: '/api/sessions/:sessionId/compact', query: OWNER },
  /** The html of the MCP App kept with a tool call (a `toolResult` frame's `app.href`). */
  toolApp: { method: 'GET', path: '/api/sessions/:sessionId/apps/:callId', query: OWNER, text: true },
  /** That app calls a tool of its server (tool policy and approvals apply); answers once the call settled. */
  appToolCall: { method: 'POST', path: '/api/sessions/:sessionId/apps/:callId/calls', query: OWNER, body: 'json' },

  listQuestions: { method: 'GET', path: '/api/sessions/:sessionId/questions', query: OWNER },
  answerQuestion: { method: 'POST', path: '/api/sessions/:sessionId/questions/:id', query: OWNER, body: 'json' },
  listApprovals: { method: 'GET', path: '/api/sessions/:sessionId/approvals', query: OWNER },
  answerApproval: {
    method: 'POST',
    path: '/api/sessions/:sessionId/approvals/:callId',
    query: OWNER,
    body: 'json',
  },
  listElicitations: { method: 'GET', path: '/api/sessions/:sessionId/elicitations', query: OWNER },
  answerElicitation: {
    method: 'POST',
    path: '/api/sessions/:sessionId/elicitations/:id',
    query: OWNER,
    body: 'json',
  },
  listClientTools: { method: 'GET', path: '/api/sessions/:sessionId/client-tools', query: OWNER },
  answerClientTool: {
    method: 'POST',
    path: '/api/sessions/:sessionId/client-tools/:callId',
    query: OWNER,
    body: 'json',
  },

  listServers: { method: 'GET', path: '/api/mcp/servers' },
  connectServer: { method: 'POST', path: '/api/connect-server', body: 'json' },
  connectA2aAgent: { method: 'POST', path: '/api/connect-a2a-agent', body: 'json' },
  listTools: { method: 'GET', path: '/api/mcp/servers/:serverId/tools' },
  executeTool: {
    method: 'POST',
    path: '/api/mcp/servers/:serverId/tools/:toolName/execute',
    query: ['progressSession', 'callId'],
    body: 'json',
  },
  removeServer: { method: 'DELETE', path: '/api/mcp/servers/:serverId' },
  signInStatus: { method: 'GET', path: '/api/mcp/servers/:serverId/sign-in' },
  signIn: { method: 'POST', path: '/api/mcp/servers/:serverId/sign-in' },
  signOut: { method: 'DELETE', path: '/api/mcp/servers/:serverId/sign-in' },
  restartServer: { method: 'POST', path: '/api/mcp/servers/:serverId/restart' },
  listResources: { method: 'GET', path: '/api/mcp/servers/:serverId/resources' },
  readResource: { method: 'GET', path: '/api/mcp/servers/:serverId/resources/read', query: ['uri'] },
  subscribeResource: { method: 'POST', path: '/api/mcp/servers/:serverId/resources/subscribe', body: 'json' },
  unsubscribeResource: { method: 'POST', path: '/api/mcp/servers/:serverId/resources/unsubscribe', body: 'json' },
  listPrompts: { method: 'GET', path: '/api/mcp/servers/:serverId/prompts' },
  getPrompt: { method: 'POST', path: '/api/mcp/servers/:serverId/prompts/:promptName/get', body: 'json' },
  setRoots: { method: 'PUT', path: '/api/mcp/servers/:serverId/roots', body: 'json' },

  createSchedule: { method: 'POST', path: '/api/schedules', body: 'json' },
  listSchedules: { method: 'GET', path: '/api/schedules' },
  getSchedule: { method: 'GET', path: '/api/schedules/:id', query: OWNER },
  pauseSchedule: { method: 'PATCH', path: '/api/schedules/:id', query: OWNER, body: 'json' },
  deleteSchedule: { method: 'DELETE', path: '/api/schedules/:id', query: OWNER },
  scheduleRuns: { method: 'GET', path: '/api/schedules/:id/runs', query: ['owner', 'limit'] },

  memory: { method: 'GET', path: '/api/memory', query: ['owner', 'q', 'limit', 'after'] },
  remember: { method: 'POST', path: '/api/memory', query: OWNER, body: 'json' },
  eraseMemory: { method: 'DELETE', path: '/api/memory', query: OWNER },
  confirmMemory: { method: 'POST', path: '/api/memory/confirm', query: OWNER, body: 'json' },
  setProfile: { method: 'PUT', path: '/api/memory/profile', query: OWNER, body: 'json' },
  exportMemory: { method: 'GET', path: '/api/memory/export', query: OWNER },
  forget: { method: 'DELETE', path: '/api/memory/:id', query: OWNER },

  addWebhook: { method: 'POST', path: '/api/webhooks', body: 'json' },
  listWebhooks: { method: 'GET', path: '/api/webhooks' },
  getWebhook: { method: 'GET', path: '/api/webhooks/:webhookId' },
  deleteWebhook: { method: 'DELETE', path: '/api/webhooks/:webhookId' },
  deliveries: { method: 'GET', path: '/api/webhooks/:webhookId/deliveries', query: ['limit'] },

  usage: { method: 'GET', path: '/api/usage', query: ['principal', 'from', 'to', 'groupBy'] },
} as const satisfies Record<string, RouteInfo>;

export type RouteName = keyof typeof ROUTES;

/**
 * The operations of the OpenAPI document the client has no method for, each with why: pages for a browser, and the
 * protocols with clients of their own. `client.request(method, path)` still reaches each one.
 */
export const NOT_IN_CLIENT: Readonly<Record<string, string>> = {
  'GET /': 'the web console (a page)',
  'GET /console/{file}': "the console's files",
  'GET /console/apps/sandbox': "the console's MCP Apps sandbox proxy (a page for a frame)",
  'GET /inspect': 'the inspector (a page)',
  'GET /inspect/': 'the inspector (a page)',
  'GET /inspect/stately': 'the inspector bridge (a page)',
  'GET /inspect/{file}': "the inspector's files",
  'GET /api/docs': 'the API docs (a page)',
  'GET /api/docs/{file}': "the API docs' files",
  'GET /api/oauth/callback': 'where a browser returns from a sign-in',
  'POST /a2a': 'A2A JSON-RPC: use an A2A client',
  'POST /a2a/rest/message:send': 'A2A HTTP+JSON: use an A2A client',
  'POST /a2a/rest/message:stream': 'A2A HTTP+JSON: use an A2A client',
  'GET /a2a/rest/tasks': 'A2A HTTP+JSON: use an A2A client',
  'GET /a2a/rest/tasks/{id}': 'A2A HTTP+JSON: use an A2A client',
  'POST /a2a/rest/tasks/{id}:cancel': 'A2A HTTP+JSON: use an A2A client',
  'POST /a2a/rest/tasks/{id}:subscribe': 'A2A HTTP+JSON: use an A2A client',
  'GET /a2a/rest/extendedAgentCard': 'A2A HTTP+JSON: use an A2A client',
  'POST /ag-ui': 'AG-UI runs: use an AG-UI client',
};

/** The path parameter names of a route path (`/a/:b/c/:d` → `b | d`). */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** The path parameter names of `path`, in order. */
export const pathParamsOf = (path: string): string[] => [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
