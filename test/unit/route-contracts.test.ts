/**
 * Every JSON route publishes the response schema its handler is typed against: `defineRoute` keeps
 * the schemas on the route (`doc`), the compiler holds the handler's answer to `z.input` of that
 * response (the `@ts-expect-error` below proves it refuses another), and each handler's answer to
 * typed fake bus results parses with the schema the OpenAPI document publishes for it.
 */
import { pino } from 'pino';
import { createScheduler } from '../../src/schedules/index.ts';
import { createRecordScheduleStore } from '../../src/schedules/record-schedule-store.ts';
import { createMemoryService, memoryStoresOf } from '../../src/memory/index.ts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TurnWaiter } from '../../src/agent/follow/turn-waiter.ts';
import { sessionAccess, type Principal } from '../../src/auth/index.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import type { FrontCommands, FrontEndBus } from '../../src/http/front-bus.ts';
import { defineRoute, type RequestContext, type Route } from '../../src/http/route.ts';
import { createRoutes } from '../../src/http/routes/index.ts';
import { RESPONSES } from '../../src/http/routes/shapes.ts';
import { openApiDocument } from '../../src/http/openapi.ts';
import { createMetrics } from '../../src/metrics/index.ts';
import type { Bus } from '../../src/bus/index.ts';
import { memoryMount } from '../../src/memory/feature/mount.ts';
import { RESPONSES as MEMORY_RESPONSES } from '../../src/memory/feature/routes.ts';
import { RESPONSES as SCHEDULE_RESPONSES } from '../../src/schedules/feature/routes.ts';
import { RESPONSES as WEBHOOK_RESPONSES } from '../../src/webhooks/feature/routes.ts';
import { schedulesMount } from '../../src/schedules/feature/mount.ts';
import { webhooksMount } from '../../src/webhooks/feature/mount.ts';
import type { WebhookCommands, WebhookService } from '../../src/webhooks/index.ts';
import { createMemoryRecordStore } from '../../src/store/records/index.ts';

const at = '2026-01-01T00:00:00.000Z';
const server = { id: 'echo', name: 'echo', status: 'connected', type: 'stdio' } as const;
const approval = {
  id: 'c1',
  kind: 'approval',
  sessionId: 's1',
  turnId: 't1',
  callId: 'c1',
  toolName: 'echo',
  serverId: 'echo',
  args: {},
  expiresAt: at,
} as const;

const elicitation = {
  id: 'el_1',
  kind: 'elicitation',
  sessionId: 's1',
  turnId: 't1',
  callId: 'c1',
  serverId: 'echo',
  message: 'Name?',
  mode: 'form',
  requestedSchema: { type: 'object' },
  expiresAt: at,
} as const;

const webhook = {
  id: 'hook',
  url: 'http://127.0.0.1:9/hook',
  events: ['turn.completed'],
  retryScheduleMs: [5000],
  timeoutMs: 10000,
  source: 'api',
} as const satisfies WebhookCommands['webhooks.get']['result'];

/** One typed answer per bus command the routes send. */
type AllCommands = FrontCommands & WebhookCommands;
const RESULTS: { [K in keyof AllCommands]: AllCommands[K]['result'] } = {
  'agent.sendMessage': { turnId: 't1', queued: false },
  'agent.reset': { seq: 3 },
  'agent.cancel': { cancelled: true },
  'agent.compact': {
    sessionId: 's1',
    compacted: true,
    seq: 9,
    method: 'summary',
    upToSeq: 6,
    tokensBefore: 7000,
    tokensAfter: 900,
  },
  'agent.openSession': { opened: true },
  'agent.questions': [approval, elicitation],
  'agent.answer': approval,
  'agent.listSessions': [{ id: 's1', lastSeq: 3, updatedAt: at, busy: false, queued: 0 }],
  'agent.sessionExists': { exists: true },
  'agent.history': { frames: [{ event: 'thinking', data: { sessionId: 's1', turnId: 't1', seq: 1 } }], lastSeq: 1 },
  'agent.toolApp': {
    app: { resourceUri: 'ui://echo/app.html', mimeType: 'text/html;profile=mcp-app', html: '<p>app</p>' },
  },
  'agent.appToolCall': {
    callId: 'c2',
    result: { content: [{ type: 'text', text: 'done' }], structuredContent: { n: 1 } },
  },
  'agent.queueAppCall': { queued: false },
  'agent.thread': { facts: [] },
  'agent.health': { status: 'ready' },
  'agent.deleteSession': { deleted: true },
  'agent.exportSession': { events: [{ seq: 1, ts: at, sessionId: 's1', event: { v: 4, type: 'reset' } }] },
  'agent.importSession': { sessionId: 'new', lastSeq: 2 },
  'agent.forkSession': { sessionId: 'new', lastSeq: 1 },
  'mcp.listServers': [server],
  'mcp.connectServer': server,
  'mcp.connectA2aAgent': server,
  'mcp.removeServer': { ...server, status: 'disconnected' },
  'mcp.restartServer': server,
  'mcp.listTools': [{ id: 'echo', name: 'echo', description: '', inputSchema: { type: 'object' } }],
  'mcp.executeTool': {
    success: true,
    data: { content: [] },
    execution: { toolName: 'echo', serverId: 'echo', duration: 2 },
    timestamp: at,
  },
  'mcp.modelTools': [],
  'mcp.callModelTool': { success: true, text: '', result: {}, serverId: 'echo', toolName: 'echo', durationMs: 1 },
  'mcp.oauthCallback': { server },
  'mcp.listResources': {
    resources: [{ uri: 'demo://a', name: 'a', mimeType: 'text/plain' }],
    resourceTemplates: [{ uriTemplate: 'demo://{id}', name: 'by id' }],
  },
  'mcp.readApp': { resourceUri: 'ui://echo/app.html', note: 'No app shown: server "echo" is not connected' },
  'mcp.readResource': {
    serverId: 'echo',
    uri: 'demo://a',
    contents: [{ uri: 'demo://a', mimeType: 'text/plain', text: 'A' }],
  },
  'mcp.subscribeResource': { serverId: 'echo', uri: 'demo://a', subscribed: true },
  'mcp.listPrompts': [{ name: 'p', arguments: [{ name: 'city', required: true }] }],
  'mcp.getPrompt': { serverId: 'echo', name: 'p', messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] },
  'mcp.attach': {},
  'mcp.setRoots': { serverId: 'echo', roots: ['file:///srv'] },
  'mcp.signIn': { serverId: 'echo', signedIn: false, authorizationUrl: 'https://auth.example.com/authorize?state=s' },
  'mcp.signInStatus': { serverId: 'echo', signedIn: true },
  'mcp.signOut': { serverId: 'echo', signedIn: false },
  'webhooks.add': webhook,
  'webhooks.list': [webhook],
  'webhooks.get': webhook,
  'webhooks.delete': webhook,
  'webhooks.deliveries': [
    {
      id: 'msg_1',
      webhookId: 'hook',
      eventId: 's1#4#turn.completed',
      type: 'turn.completed',
      status: 'pending',
      attempts: 1,
      createdAt: at,
      nextAttemptAt: at,
      lastStatusCode: 503,
      lastError: 'HTTP 503',
    },
  ],
};
const bus = { execute: (name: keyof AllCommands) => Promise.resolve(RESULTS[name]) } as unknown as FrontEndBus &
  Bus<WebhookCommands, never>;
const waiter = {
  ask: () => Promise.resolve({ sessionId: 's1', turnId: 't1', seq: 2, content: 'Hi', model: 'm' }),
} as unknown as TurnWaiter;

/** A scheduler on a memory store (never started): the POST makes the schedule the other schedule routes read. */
const scheduleStore = createRecordScheduleStore({ records: createMemoryRecordStore(), log: pino({ level: 'silent' }) });
const clock = { now: () => Date.parse(at) };
const schedules = createScheduler({
  store: scheduleStore,
  bus,
  turns: { steps: () => Promise.resolve([]) },
  clock: { now: () => Date.parse(at) },
  log: pino({ level: 'silent' }),
});
const config = agentConfigSchema.parse({ llm: { model: 'm' }, storage: { type: 'memory' }, memory: {} });
/** Memory in memory: the POST saves the item (`item-1`) the DELETE of one item forgets. */
const memory = createMemoryService({
  ...memoryStoresOf(createMemoryRecordStore(), { log: pino({ level: 'silent' }), ids: () => 'audit-1' }),
  config: config.memory!,
  clock: { now: () => Date.parse(at) },
  ids: () => 'item-1',
});
const routes = createRoutes({
  version: '1.0.0',
  engine: 'node',
  startedAt: 0,
  clock: { now: () => Date.parse(at) },
  isReady: () => true,
  config,
  waiter,
  ids: () => 'id',
  metrics: createMetrics(),
  features: [
    schedulesMount({ scheduler: schedules, store: scheduleStore, clock, configured: () => [], fires: false }),
    memoryMount({ clock, memory }),
    webhooksMount({ clock, bus, webhooks: {} as WebhookService }),
  ],
});

/** The JSON routes: no other content type (the OpenAPI document, served as the text it builds, is a page route). */
const jsonRoutes = routes.filter((r) => !r.doc?.contentType && r.path !== '/api/openapi.json');
const WHSEC = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const BODIES: Record<string, unknown> = {
  'POST /api/message-sync': { message: 'Hi' },
  'POST /api/message': { message: 'Hi' },
  'POST /api/connect-server': { name: 'echo', config: { type: 'stdio', command: 'node' } },
  'POST /api/connect-a2a-agent': { name: 'peer', config: { url: 'http://127.0.0.1:9/' } },
  'POST /api/sessions/:sessionId/approvals/:callId': { decision: 'approve' },
  'POST /api/sessions/:sessionId/apps/:callId/calls': { name: 'refresh' },
  'POST /api/sessions/:sessionId/elicitations/:id': { action: 'decline' },
  'POST /api/sessions/:sessionId/client-tools/:callId': { content: 'ran' },
  'POST /api/sessions/:sessionId/questions/:id': { decision: 'approve' },
  'POST /api/sessions/:sessionId/fork': { seq: 1 },
  'POST /api/schedules': { id: 'nightly', cron: '0 3 * * *', message: 'Report' },
  'PATCH /api/schedules/:id': { paused: true },
  'POST /api/mcp/servers/:serverId/resources/subscribe': { uri: 'demo://a' },
  'POST /api/mcp/servers/:serverId/resources/unsubscribe': { uri: 'demo://a' },
  'PUT /api/mcp/servers/:serverId/roots': { roots: ['file:///srv'] },
  'POST /api/memory': { text: 'Prefers short answers', tags: ['style'] },
  'PUT /api/memory/profile': { text: 'Alex' },
  'POST /api/webhooks': { url: 'http://127.0.0.1:9/hook', events: ['turn.completed'], secret: WHSEC },
};
/** Bodies of the routes that take raw bytes (an NDJSON import). */
const RAW: Record<string, string> = {
  'POST /api/sessions/import': `{"seq":1,"ts":"${at}","event":{"v":2,"type":"reset"}}\n`,
};
const ANONYMOUS: Principal = {
  name: 'anonymous',
  scopes: new Set(['chat', 'inspect', 'schedule', 'admin'] as const),
  via: 'anonymous',
  owner: undefined,
};
const request = (route: Route): RequestContext => ({
  method: route.method,
  path: route.path,
  params: {
    sessionId: 's1',
    callId: 'c1',
    serverId: 'echo',
    toolName: 'echo',
    promptName: 'p',
    webhookId: 'hook',
    ...(route.path.startsWith('/api/schedules') && { id: 'nightly' }),
    ...(route.path.startsWith('/api/memory') && { id: 'item-1' }),
  },
  query: new URLSearchParams('since=0&uri=demo://a'),
  headers: {},
  body: BODIES[`${route.method} ${route.path}`],
  ...(route.rawBody && { raw: Buffer.from(RAW[`${route.method} ${route.path}`] ?? '') }),
  ip: '127.0.0.1',
  signal: new AbortController().signal,
  bus,
  principal: ANONYMOUS,
  sessions: sessionAccess(ANONYMOUS, '127.0.0.1', { strict: false, sessionsPerPrincipal: 1000 }),
});

describe('route contracts', () => {
  it('every JSON route publishes one of the response bodies', () => {
    const featured = [SCHEDULE_RESPONSES, MEMORY_RESPONSES, WEBHOOK_RESPONSES].flatMap((r) => Object.values(r));
    const published = new Set<unknown>([...Object.values(RESPONSES), ...featured]);
    expect(jsonRoutes.length).toBeGreaterThanOrEqual(18);
    for (const route of jsonRoutes)
      expect(published.has(route.doc?.response), `${route.method} ${route.path}`).toBe(true);
  });

  it.each(jsonRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s answers with its published response schema',
    async (_name, route) => {
      const result = await route.handler(request(route));
      expect(result.contentType).toBeUndefined();
      const parsed = route.doc!.response!.safeParse(result.body);
      expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    },
  );

  it('parses the query with its schema: ?since= is a non-negative integer', async () => {
    const history = jsonRoutes.find((r) => r.path === '/api/sessions/:sessionId/history')!;
    const withSince = (since: string) =>
      history.handler({ ...request(history), query: new URLSearchParams({ since }) });
    await expect(withSince('2')).resolves.toMatchObject({ body: { sessionId: 's1' } });
    for (const bad of ['-1', '1.5', 'abc']) {
      await expect(withSince(bad)).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message: 'since must be a non-negative integer',
        details: { field: 'since' },
      });
    }
  });

  it('refuses, at compile time, a handler whose answer is not its response schema', () => {
    const route = defineRoute({
      method: 'GET',
      path: '/x',
      summary: 'x',
      response: z.object({ status: z.literal('live') }),
      // @ts-expect-error `status` must be "live"
      handler: () => ({ body: { status: 'dead' as const } }),
    });
    expect(route.doc.response.safeParse({ status: 'live' }).success).toBe(true);
  });
});

describe('OpenAPI security follows src/auth', () => {
  const KEY = 'k'.repeat(16);
  const security = (auth: Record<string, unknown>) => {
    const doc = openApiDocument(routes, {
      version: '1',
      auth: agentConfigSchema.parse({ llm: { model: 'm' }, server: { auth } }).server.auth,
    }) as {
      paths: Record<string, Record<string, { security: object[]; 'x-scope'?: string }>>;
    };
    return (path: string, method = 'get') => doc.paths[path]![method]!;
  };

  it('the API key alone is a chat key: it is offered on chat routes only', () => {
    const op = security({ apiKey: KEY });
    expect(op('/api/sessions').security).toEqual([{ apiKey: [] }]);
    expect(op('/metrics').security).toEqual([]); // no credential of this configuration may
    expect(op('/api/connect-server', 'post')).toMatchObject({ security: [], 'x-scope': 'admin' });
  });

  it('named keys and JWTs are the bearer scheme; approvals need chat once any of them is set', () => {
    const op = security({ adminKey: KEY, keys: [{ name: 'alice', key: KEY + 'a', scopes: ['chat'] }] });
    expect(op('/api/sessions/{sessionId}/approvals/{callId}', 'post')).toMatchObject({
      security: [{ adminKey: [] }, { bearer: [] }],
      'x-scope': 'chat',
    });
    expect(op('/api/connect-server', 'post').security).toEqual([{ adminKey: [] }, { bearer: [] }]);
  });
});
