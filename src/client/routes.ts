/**
 * The REST routes of agentd as the client knows them, in one list: OPERATIONS holds every operation of
 * `/api/openapi.json` once (test/int/client-openapi.test.ts holds it to the document a running agentd serves), as
 * - a method of the client, by its name (`route`): method, path (`:name` segments are path parameters), query
 *   parameter names, the body it takes (`json`: required, `json?`: optional, `ndjson`: a text body), and as types
 *   only what it takes and answers, read off the server's own zod schemas (the ones that parse its requests and
 *   publish the document): `body` and `query` as a caller writes them (`z.input`), `answer` as the server sends it
 *   (`z.output`);
 * - or one the client leaves out on purpose, as the document names it (`METHOD /path`), with why: pages for a
 *   browser, and the protocols with clients of their own (`client.request(method, path)` still reaches each one).
 * ROUTES, RouteTypes and NOT_IN_CLIENT are read off it. The server's modules are imported for their types only: the
 * browser build carries no schema.
 */
import type { z } from 'zod';
import type { RESPONSES } from '../http/routes/shapes.ts';
import type {
  historyQuery,
  messageSchema,
  messageSyncSchema,
  ownerQuery,
  resetSchema,
} from '../http/routes/agent-routes.ts';
import type { sessionsQuery } from '../http/routes/session-pages.ts';
import type { appCallSchema } from '../http/routes/app-routes.ts';
import type { exportQuery, forkSchema } from '../http/routes/session-transfer-routes.ts';
import type { connectA2aSchema, connectSchema, executeQuery, toolArgs } from '../http/routes/mcp-routes.ts';
import type { promptArgs, rootsBody, uriBody } from '../http/routes/mcp-feature-routes.ts';
import type { ApprovalReply, ClientToolReply, ElicitationAction } from '../conversation/records.ts';
import { FEATURE_ROUTES } from './feature-routes.ts';
import { route, type IoOf, type RouteInfo, type TypedRoute } from './route-kit.ts';

export type { HttpMethod, RouteInfo } from './route-kit.ts';

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;
type R = typeof RESPONSES;
type Owner = In<typeof ownerQuery>;
type ElicitationAnswer = { action: ElicitationAction; content?: Record<string, unknown> };
const OWNER = ['owner'] as const;

/** Every operation of the OpenAPI document: a method of the client (`route`), or left out with why (a string). */
export const OPERATIONS = {
  health: route<Out<R['health']>>()({ method: 'GET', path: '/api/health' }),
  live: route<Out<R['live']>>()({ method: 'GET', path: '/api/health/live' }),
  ready: route<Out<R['ready']>>()({ method: 'GET', path: '/api/health/ready' }),
  configYaml: route<string>()({ method: 'GET', path: '/api/config.yaml', text: true }),
  openApi: route<Out<R['openApi']>>()({ method: 'GET', path: '/api/openapi.json' }),
  metrics: route<string>()({ method: 'GET', path: '/metrics', text: true }),
  jwks: route<{ keys: Record<string, unknown>[] }>()({ method: 'GET', path: '/.well-known/jwks.json' }),
  agentCard: route<Record<string, unknown>>()({ method: 'GET', path: '/.well-known/agent-card.json' }),
  agUiCapabilities: route<Record<string, unknown>>()({ method: 'GET', path: '/ag-ui/capabilities' }),

  messageSync: route<Out<R['messageSync']>, In<typeof messageSyncSchema>>()({
    method: 'POST',
    path: '/api/message-sync',
    body: 'json',
  }),
  message: route<Out<R['messageQueued']>, In<typeof messageSchema>>()({
    method: 'POST',
    path: '/api/message',
    body: 'json',
  }),
  reset: route<Out<R['reset']>, In<typeof resetSchema>>()({ method: 'POST', path: '/api/reset', body: 'json?' }),

  listSessions: route<Out<R['sessions']>, never, In<typeof sessionsQuery>>()({
    method: 'GET',
    path: '/api/sessions',
    query: ['limit', 'cursor'],
  }),
  history: route<Out<R['history']>, never, In<typeof historyQuery>>()({
    method: 'GET',
    path: '/api/sessions/:sessionId/history',
    query: ['owner', 'since'],
  }),
  deleteSession: route<Out<R['sessionDeleted']>, never, Owner>()({
    method: 'DELETE',
    path: '/api/sessions/:sessionId',
    query: OWNER,
  }),
  cancel: route<Out<R['sessionCancelled']>, never, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/cancel',
    query: OWNER,
  }),
  exportSession: route<string, never, In<typeof exportQuery>>()({
    method: 'GET',
    path: '/api/sessions/:sessionId/export',
    query: ['owner', 'reasoning'],
    text: true,
  }),
  importSession: route<Out<R['sessionCreated']>, string>()({
    method: 'POST',
    path: '/api/sessions/import',
    body: 'ndjson',
  }),
  forkSession: route<Out<R['sessionCreated']>, In<typeof forkSchema>, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/fork',
    query: OWNER,
    body: 'json',
  }),
  compact: route<Out<R['compacted']>, never, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/compact',
    query: OWNER,
  }),
  /** The html of the MCP App kept with a tool call (a `toolResult` frame's `app.href`). */
  toolApp: route<string, never, Owner>()({
    method: 'GET',
    path: '/api/sessions/:sessionId/apps/:callId',
    query: OWNER,
    text: true,
  }),
  /** That app calls a tool of its server (tool policy and approvals apply); answers once the call settled. */
  appToolCall: route<Out<R['appCall']>, In<typeof appCallSchema>, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/apps/:callId/calls',
    query: OWNER,
    body: 'json',
  }),

  listQuestions: route<Out<R['questions']>, never, Owner>()({
    method: 'GET',
    path: '/api/sessions/:sessionId/questions',
    query: OWNER,
  }),
  answerQuestion: route<Out<R['questionAnswered']>, ApprovalReply | ElicitationAnswer | ClientToolReply, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/questions/:id',
    query: OWNER,
    body: 'json',
  }),
  listApprovals: route<Out<R['approvals']>, never, Owner>()({
    method: 'GET',
    path: '/api/sessions/:sessionId/approvals',
    query: OWNER,
  }),
  answerApproval: route<Out<R['approvalAnswered']>, ApprovalReply, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/approvals/:callId',
    query: OWNER,
    body: 'json',
  }),
  listElicitations: route<Out<R['elicitations']>, never, Owner>()({
    method: 'GET',
    path: '/api/sessions/:sessionId/elicitations',
    query: OWNER,
  }),
  answerElicitation: route<Out<R['elicitationAnswered']>, ElicitationAnswer, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/elicitations/:id',
    query: OWNER,
    body: 'json',
  }),
  listClientTools: route<Out<R['clientToolCalls']>, never, Owner>()({
    method: 'GET',
    path: '/api/sessions/:sessionId/client-tools',
    query: OWNER,
  }),
  answerClientTool: route<Out<R['clientToolAnswered']>, ClientToolReply, Owner>()({
    method: 'POST',
    path: '/api/sessions/:sessionId/client-tools/:callId',
    query: OWNER,
    body: 'json',
  }),

  listServers: route<Out<R['servers']>>()({ method: 'GET', path: '/api/mcp/servers' }),
  connectServer: route<Out<R['serverConnected']>, In<typeof connectSchema>>()({
    method: 'POST',
    path: '/api/connect-server',
    body: 'json',
  }),
  connectA2aAgent: route<Out<R['serverConnected']>, In<typeof connectA2aSchema>>()({
    method: 'POST',
    path: '/api/connect-a2a-agent',
    body: 'json',
  }),
  listTools: route<Out<R['tools']>>()({ method: 'GET', path: '/api/mcp/servers/:serverId/tools' }),
  executeTool: route<Out<R['toolExecuted']>, In<typeof toolArgs>, In<typeof executeQuery>>()({
    method: 'POST',
    path: '/api/mcp/servers/:serverId/tools/:toolName/execute',
    query: ['progressSession', 'callId'],
    body: 'json',
  }),
  removeServer: route<Out<R['serverRemoved']>>()({ method: 'DELETE', path: '/api/mcp/servers/:serverId' }),
  signInStatus: route<Out<R['signIn']>>()({ method: 'GET', path: '/api/mcp/servers/:serverId/sign-in' }),
  signIn: route<Out<R['signIn']>>()({ method: 'POST', path: '/api/mcp/servers/:serverId/sign-in' }),
  signOut: route<Out<R['signIn']>>()({ method: 'DELETE', path: '/api/mcp/servers/:serverId/sign-in' }),
  restartServer: route<Out<R['serverConnected']>>()({ method: 'POST', path: '/api/mcp/servers/:serverId/restart' }),
  listResources: route<Out<R['resources']>>()({ method: 'GET', path: '/api/mcp/servers/:serverId/resources' }),
  readResource: route<Out<R['resourceRead']>, never, In<typeof uriBody>>()({
    method: 'GET',
    path: '/api/mcp/servers/:serverId/resources/read',
    query: ['uri'],
  }),
  subscribeResource: route<Out<R['subscription']>, In<typeof uriBody>>()({
    method: 'POST',
    path: '/api/mcp/servers/:serverId/resources/subscribe',
    body: 'json',
  }),
  unsubscribeResource: route<Out<R['subscription']>, In<typeof uriBody>>()({
    method: 'POST',
    path: '/api/mcp/servers/:serverId/resources/unsubscribe',
    body: 'json',
  }),
  listPrompts: route<Out<R['prompts']>>()({ method: 'GET', path: '/api/mcp/servers/:serverId/prompts' }),
  getPrompt: route<Out<R['prompt']>, In<typeof promptArgs>>()({
    method: 'POST',
    path: '/api/mcp/servers/:serverId/prompts/:promptName/get',
    body: 'json',
  }),
  setRoots: route<Out<R['roots']>, In<typeof rootsBody>>()({
    method: 'PUT',
    path: '/api/mcp/servers/:serverId/roots',
    body: 'json',
  }),

  ...FEATURE_ROUTES,

  // Left out on purpose, each with why.
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
} as const satisfies Record<string, TypedRoute<RouteInfo, unknown> | string>;

type Operations = typeof OPERATIONS;
type MethodName = { [K in keyof Operations]: Operations[K] extends string ? never : K }[keyof Operations];
const entries: [string, unknown][] = Object.entries(OPERATIONS);

/** The client's methods (`client.api.<name>`), by name: the routes of OPERATIONS. */
export const ROUTES = Object.fromEntries(entries.filter(([, o]) => typeof o !== 'string')) as {
  [K in MethodName]: Operations[K];
};
export type RouteName = keyof typeof ROUTES;
/** What each method takes and answers. */
export type RouteTypes = { [K in RouteName]: IoOf<(typeof ROUTES)[K]> };

/** The operations the client has no method for, each with why: the strings of OPERATIONS. */
export const NOT_IN_CLIENT: Readonly<Record<string, string>> = Object.fromEntries(
  entries.filter((e): e is [string, string] => typeof e[1] === 'string'),
);
