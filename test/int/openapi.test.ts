/**
 * GET /api/openapi.json: a valid OpenAPI 3.1 document of exactly the route table, and every
 * documented operation answers a real request with the documented shape (in process: no socket is
 * under test here, test/int/inject.test.ts proves the answers equal).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRoutes, type RoutesDeps } from '../../src/http/routes/index.ts';
import { a2aMount } from '../../src/a2a-face/index.ts';
import { agUiMount } from '../../src/ag-ui-face/index.ts';
import type { AgentConfig } from '../../src/config/schema.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { fixturePath } from '../support/paths.ts';
import { everythingStdio } from '../support/messaging.ts';
import { injectApp, type InProcessApp } from '../support/start-app.ts';
import { startOAuthFixture } from '../fixtures/mcp/oauth-server.js';
import { PATIENT } from '../support/wait.ts';
import { tableFeatures } from '../support/feature-mounts.ts';

const API = 'openapi-client-key-0123456789';
const ADMIN = 'openapi-admin-key-0123456789';
type Operation = {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
  security: object[];
  requestBody?: { content: Record<string, { schema: object; example?: unknown }> };
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: { Error: object } };
};

/** The route table with the faces' routes, and the routes the faces serve themselves (documented only). */
function routesAndDocs(config: AgentConfig) {
  // Routes and docs read the config only.
  const faces = [
    a2aMount({ config } as unknown as Parameters<typeof a2aMount>[0]),
    agUiMount({ config } as unknown as Parameters<typeof agUiMount>[0]),
  ];
  return [
    ...createRoutes({ config, faces, features: tableFeatures() } as unknown as RoutesDeps),
    ...faces.flatMap((face) => face.docs?.() ?? []),
  ];
}

/** A request for each operation: path values and a body, in an order that leaves deletions last. */
const PATH_VALUES: Record<string, string> = {
  serverId: 'echo',
  toolName: 'echo',
  sessionId: 'default',
  file: 'main.js',
  webhookId: 'contract',
};
const BODIES: Record<string, unknown> = {
  // Asks for the tools the turn called too, so the optional `tools` of the reply is held to its documented shape.
  'POST /api/message-sync': {
    message: 'Hello from the contract test [[tool:get-sum {"a":1,"b":2}]]',
    include: ['tools'],
  },
  'POST /api/message': { message: 'Queued from the contract test' },
  'POST /api/reset': { sessionId: 'scratch' },
  'POST /api/connect-server': {
    name: 'second',
    config: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] },
  },
  'POST /api/mcp/servers/{serverId}/tools/{toolName}/execute': { message: 'hi' },
  'POST /api/sessions/{sessionId}/approvals/{callId}': { decision: 'approve' },
  'POST /api/sessions/{sessionId}/elicitations/{id}': { action: 'decline' },
  'POST /api/sessions/{sessionId}/client-tools/{callId}': { content: 'ran' },
  'POST /api/sessions/{sessionId}/questions/{id}': { decision: 'approve' },
  'POST /api/sessions/{sessionId}/fork': { seq: 1 },
  'POST /api/schedules': { id: 'contract-schedule', cron: '0 3 1 1 *', message: 'Yearly' },
  'POST /api/memory': { text: 'Saved by the contract test', tags: ['contract'] },
  'PUT /api/memory/profile': { text: 'The contract test' },
  'PATCH /api/schedules/{id}': { paused: true },
  'POST /api/mcp/servers/{serverId}/resources/subscribe': { uri: 'demo://resource/dynamic/text/1' },
  'POST /api/mcp/servers/{serverId}/resources/unsubscribe': { uri: 'demo://resource/dynamic/text/1' },
  'POST /api/mcp/servers/{serverId}/prompts/{promptName}/get': { city: 'Paris' },
  'PUT /api/mcp/servers/{serverId}/roots': { roots: ['file:///tmp/agentd-openapi'] },
  'POST /api/webhooks': {
    id: 'contract',
    url: 'http://127.0.0.1:9/hook',
    events: ['turn.completed'],
    secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  },
  'POST /a2a': { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'no-such/task' } },
  'POST /a2a/rest/message:send': { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'Hi' }] } },
  'POST /a2a/rest/message:stream': { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'Hi' }] } },
  'POST /ag-ui': { threadId: 'contract', runId: 'contract-run', messages: [{ id: 'm1', role: 'user', content: 'Hi' }] },
};
/** Operations on one task (which must exist, and still run to be canceled or followed): test/int/a2a-rest.test.ts checks their answers. */
const onOneTask = (key: string) => /^\w+ \/a2a\/rest\/tasks\/\{id\}/.test(key);
/** Query strings of the operations that need one. */
const QUERIES: Record<string, string> = {
  'GET /api/mcp/servers/{serverId}/resources/read': '?uri=demo%3A%2F%2Fresource%2Fdynamic%2Ftext%2F1',
  // Another owner's item (the admin names it): the caller's own memory is erased by `DELETE /api/memory` before.
  'DELETE /api/memory/{id}': '?owner=contract',
};
/** Resources and prompts are asked of server-everything (the echo fixture offers none). */
const FEATURE_VALUES: Record<string, string> = { serverId: 'everything', promptName: 'args-prompt' };
/** A principal's sign-in is asked of an OAuth-protected server each principal signs in to. */
const SIGN_IN_VALUES: Record<string, string> = { serverId: 'personal' };
/** The memory item forgotten: one of the owner `contract` (saved before the requests). */
const MEMORY_VALUES: Record<string, string> = {};
/** The schedule the POST made. */
const SCHEDULE_VALUES: Record<string, string> = { id: 'contract-schedule' };
/** Bodies that are not JSON, with their media type (an NDJSON import). */
const RAW_BODIES: Record<string, { type: string; text: string }> = {
  'POST /api/sessions/import': {
    type: 'application/x-ndjson',
    text: '{"seq":1,"ts":"2026-01-01T00:00:00.000Z","event":{"v":2,"type":"userMessage","turnId":"t1","content":"hi"}}\n',
  },
};
/** An MCP App's calls: its example body validates, and the call finds no app here. */
const APP_CALLS = 'POST /api/sessions/{sessionId}/apps/{callId}/calls';

/** The approval routes use a session whose turn waits for the approval of `callId` (set up before the requests). */
const APPROVAL_VALUES: Record<string, string> = { sessionId: 'waiting' };
/** The one list and answer route: a call of its own waiting for approval. */
const QUESTION_VALUES: Record<string, string> = { sessionId: 'questions' };

/** Starts a turn in `sessionId` whose tool call waits for approval; resolves with its call id. */
async function pendingCall(request: InProcessApp['request'], sessionId: string): Promise<string> {
  const headers = { Authorization: `Bearer ${API}`, 'Content-Type': 'application/json' };
  await request(`/api/message`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ sessionId, message: 'wait [[tool:big {"bytes":3}]]' }),
  });
  return vi.waitFor(async () => {
    const { approvals } = (await (await request(`/api/sessions/${sessionId}/approvals`, { headers })).json()) as {
      approvals: { callId: string }[];
    };
    if (!approvals[0]) throw new Error('no call waited for approval');
    return approvals[0].callId;
  }, PATIENT);
}

/** The client tool routes use a session whose turn waits for the result of a tool its AG-UI client runs. */
const CLIENT_TOOL_VALUES: Record<string, string> = { sessionId: 'client-running' };

/** Runs a turn over AG-UI in `sessionId` whose model calls the client's tool; resolves with the call's id. */
async function pendingClientCall(request: InProcessApp['request'], sessionId: string): Promise<string> {
  const headers = { Authorization: `Bearer ${API}`, 'Content-Type': 'application/json' };
  const tools = [{ name: 'locate', description: 'Where the page is', parameters: { type: 'object' } }];
  const run = await request('/ag-ui', {
    method: 'POST',
    headers,
    body: JSON.stringify({
      threadId: sessionId,
      runId: `run-${Math.random().toString(36).slice(2)}`,
      tools,
      messages: [{ id: 'm1', role: 'user', content: 'where [[tool:locate {}]]' }],
    }),
  });
  const pending = /"pendingToolCallIds":\["([^"]+)"\]/.exec(await run.text());
  if (!pending) throw new Error('the run left no client tool call pending');
  return pending[1]!;
}

/** The elicitation routes use a session whose tool call's server waits for an answer to `id`. */
const ELICITATION_VALUES: Record<string, string> = { sessionId: 'asking' };

/** Starts a turn in `sessionId` whose tool call asks the user something; resolves with the question's id. */
async function pendingQuestion(request: InProcessApp['request'], sessionId: string): Promise<string> {
  const headers = { Authorization: `Bearer ${API}`, 'Content-Type': 'application/json' };
  await request(`/api/message`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ sessionId, message: 'ask [[tool:trigger-elicitation-request {}]]' }),
  });
  return vi.waitFor(async () => {
    const { elicitations } = (await (await request(`/api/sessions/${sessionId}/elicitations`, { headers })).json()) as {
      elicitations: { id: string }[];
    };
    if (!elicitations[0]) throw new Error('no question waited for an answer');
    return elicitations[0].id;
  }, PATIENT);
}

describe('OpenAPI document', () => {
  let sim: Simulator;
  let oauth: Awaited<ReturnType<typeof startOAuthFixture>>;
  let svc: InProcessApp;
  let doc: Doc;
  beforeAll(async () => {
    sim = await startSimulator();
    oauth = await startOAuthFixture();
    svc = await injectApp(
      {
        server: { inspect: true, auth: { apiKey: API, adminKey: ADMIN }, limits: { rest: { points: 10_000 } } },
        memory: {},
        mcpServers: {
          echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] },
          everything: { ...everythingStdio, timeout: 60_000, roots: ['file:///tmp/agentd-openapi'] },
          personal: { type: 'http', baseUrl: oauth.url, oauth: { per: 'principal' } },
        },
        toolPolicy: { rules: [{ server: 'echo', tool: 'big', action: 'ask' }] },
      },
      { modelUrl: sim.url },
    );
    const res = await svc.request(`/api/openapi.json`); // public: no key
    expect(res.status).toBe(200);
    doc = (await res.json()) as Doc;
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
    await oauth.close();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminKey', 'apiKey']);
  });

  it('files each operation under one of its tags, and every tag holds some', () => {
    const { tags } = doc as unknown as { tags: { name: string }[] };
    const used = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops as Record<string, { tags?: string[] }>).map((op) => op.tags ?? []),
    );
    for (const t of used) expect(t).toHaveLength(1);
    expect(new Set(used.flat())).toEqual(new Set(tags.map((t) => t.name)));
  });

  it('describes every route of the table and nothing else', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const table = routesAndDocs(svc.config).map((r) => `${r.method} ${r.path.replace(/\/:(\w+)/g, '/{$1}')}`);
    expect(documented.sort()).toEqual(table.sort());
  });

  it('names the key each operation needs', () => {
    expect(doc.paths['/api/sessions']!.get!.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/api/connect-server']!.post!.security).toEqual([{ adminKey: [] }]);
    expect(doc.paths['/api/health']!.get!.responses['401']).toBeDefined();
    expect(doc.paths['/api/openapi.json']!.get!.security).toEqual([]);
    expect(doc.paths['/api/openapi.json']!.get!.responses['401']).toBeUndefined();
  });

  it("every operation's default Try-it body (its example) is valid: it validates and a real request with it answers no 400", async () => {
    // Runs before the test below, which removes servers and sessions. Fresh pending answers for the example bodies of the approval and elicitation routes.
    const values: Record<string, string> = {
      ...PATH_VALUES,
      callId: await pendingCall(svc.request, 'waiting-example'),
      id: await pendingQuestion(svc.request, 'asking-example'),
      questionId: await pendingCall(svc.request, 'questions-example'),
      clientCallId: await pendingClientCall(svc.request, 'client-example'),
      serverId: 'everything',
      toolName: 'get-tiny-image', // takes no arguments: the example is {}
      promptName: 'simple-prompt',
    };
    const sessionOf = (path: string) =>
      path.includes('/questions')
        ? 'questions-example'
        : path.includes('/approvals')
          ? 'waiting-example'
          : path.includes('/elicitations')
            ? 'asking-example'
            : path.includes('/client-tools')
              ? 'client-example'
              : 'default';
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const answers: Record<string, number> = {};
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!op.requestBody) continue;
        const key = `${method.toUpperCase()} ${path}`;
        const [type, media] = Object.entries(op.requestBody.content)[0]!;
        expect(media.example, `${key} has no example body`).toBeDefined();
        if (type === 'application/json') {
          const validate = ajv.compile(media.schema);
          expect(validate(media.example) ? [] : validate.errors, key).toEqual([]);
        }
        const url = path.replace(/\{(\w+)\}/g, (_m, name: string) =>
          name === 'sessionId'
            ? sessionOf(path)
            : name === 'callId' && path.includes('/client-tools')
              ? values.clientCallId!
              : name === 'id' && path.includes('/questions')
                ? values.questionId!
                : name === 'id' && path.startsWith('/api/schedules/')
                  ? 'daily-report' // the POST's example made it
                  : values[name]!,
        );
        const res = await svc.request(`${url}`, {
          method: method.toUpperCase(),
          headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': type },
          body: typeof media.example === 'string' ? media.example : JSON.stringify(media.example),
        });
        answers[key] = res.status;
        expect(res.status, `${key}: ${await res.clone().text()}`).not.toBe(400);
      }
    }
    // Nothing listens on the examples' 127.0.0.1:3002: both runtime connects fail there (500), after validation.
    expect(answers).toEqual(
      Object.fromEntries(
        Object.keys(answers).map((k) => [
          k,
          k === 'POST /api/connect-server' || k === 'POST /api/connect-a2a-agent'
            ? 500
            : k === 'POST /api/memory'
              ? 201
              : k === APP_CALLS
                ? 404 // validated, then no app is kept with that call (test/int/mcp-app-calls.test.ts calls one)
                : 200,
        ]),
      ),
    );
    await svc.request(`/api/mcp/servers/remote`, { method: 'DELETE', headers: { Authorization: `Bearer ${ADMIN}` } });
    await svc.request(`/api/mcp/servers/peer`, { method: 'DELETE', headers: { Authorization: `Bearer ${ADMIN}` } });
  });

  it('every operation answers a real request with its documented shape', async () => {
    APPROVAL_VALUES.callId = await pendingCall(svc.request, 'waiting');
    QUESTION_VALUES.id = await pendingCall(svc.request, 'questions');
    ELICITATION_VALUES.id = await pendingQuestion(svc.request, 'asking');
    CLIENT_TOOL_VALUES.callId = await pendingClientCall(svc.request, CLIENT_TOOL_VALUES.sessionId!);
    const saved = await svc.request('/api/memory?owner=contract', {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'To forget' }),
    });
    MEMORY_VALUES.id = ((await saved.json()) as { item: { id: string } }).item.id;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const operations = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })))
      .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const checked: string[] = [];
    for (const { method, path, op } of operations) {
      const key = `${method} ${path}`;
      // Answers 200 only for a pending OAuth sign-in, which needs an authorization server: test/int/mcp-oauth.test.ts.
      if (key === 'GET /api/oauth/callback') continue;
      // Answers 200 only with an A2A agent to reach: test/int/a2a-tools.test.ts checks that answer.
      if (key === 'POST /api/connect-a2a-agent' || onOneTask(key)) continue;
      // Answer 200 only after a call of a tool with an MCP App: test/int/mcp-apps.test.ts and mcp-app-calls.test.ts check them.
      if (key === 'GET /api/sessions/{sessionId}/apps/{callId}' || key === APP_CALLS) continue;
      const special = path.includes('/questions')
        ? QUESTION_VALUES
        : path.includes('/approvals')
          ? APPROVAL_VALUES
          : path.includes('/elicitations')
            ? ELICITATION_VALUES
            : path.includes('/client-tools')
              ? CLIENT_TOOL_VALUES
              : /\/(resources|prompts|roots)\b/.test(path)
                ? FEATURE_VALUES
                : path.endsWith('/sign-in')
                  ? SIGN_IN_VALUES
                  : path.startsWith('/api/schedules/')
                    ? SCHEDULE_VALUES
                    : path.startsWith('/api/memory/')
                      ? MEMORY_VALUES
                      : {};
      const values = { ...PATH_VALUES, ...special };
      const url = path.replace(/\{(\w+)\}/g, (_m, name: string) =>
        name === 'file'
          ? path.startsWith('/api/docs')
            ? 'docs.js'
            : path.startsWith('/inspect')
              ? 'inspect.js'
              : 'main.js'
          : values[name]!,
      );
      const given = BODIES[key];
      const raw = RAW_BODIES[key];
      const body = raw
        ? { type: raw.type, text: raw.text }
        : given !== undefined
          ? { type: 'application/json', text: JSON.stringify(given) }
          : undefined;
      const res = await svc.request(`${url}${QUERIES[key] ?? ''}`, {
        method,
        headers: { Authorization: `Bearer ${ADMIN}`, ...(body && { 'Content-Type': body.type }) },
        ...(body && { body: body.text }),
      });
      const success = op.responses['201'] ? '201' : '200';
      expect(String(res.status), `${key}: ${String(res.status) === success ? '' : await res.clone().text()}`).toBe(
        success,
      );
      expect(res.headers.get('x-ratelimit-limit'), key).toMatch(/^\d+$/);
      const [type, { schema }] = Object.entries(op.responses[success]!.content!)[0]!;
      expect(res.headers.get('content-type'), key).toContain(type);
      if (type !== 'application/json') continue;
      const json: unknown = await res.json();
      const validate = ajv.compile(schema);
      expect(validate(json) ? [] : validate.errors, key).toEqual([]);
      checked.push(key);
    }
    // Every JSON route of the table was answered and checked against its published schema.
    const jsonRoutes = routesAndDocs(svc.config).filter(
      (r) =>
        !r.doc?.contentType &&
        r.path !== '/api/connect-a2a-agent' &&
        `${r.method} ${r.path}` !== 'POST /api/sessions/:sessionId/apps/:callId/calls' &&
        !onOneTask(`${r.method} ${r.path.replace(/\/:(\w+)/g, '/{$1}')}`),
    );
    expect(checked.sort()).toEqual(jsonRoutes.map((r) => `${r.method} ${r.path.replace(/\/:(\w+)/g, '/{$1}')}`).sort());
  });

  it('documents the error answers with the envelope', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const op = doc.paths['/api/mcp/servers/{serverId}/tools']!.get!;
    expect(op.responses['404']).toBeDefined();
    const res = await svc.request(`/api/mcp/servers/nope/tools`, { headers: { Authorization: `Bearer ${API}` } });
    expect(res.status).toBe(404);
    const validate = ajv.compile(doc.components.schemas.Error);
    expect(validate(await res.json()) ? [] : validate.errors).toEqual([]);
  });
});
