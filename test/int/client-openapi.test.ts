/**
 * The client and /api/openapi.json agree: the client's one list of operations (OPERATIONS, src/client/routes.ts) holds
 * every operation of the document served by a running agentd once, as a method of the client (ROUTES) or as one it
 * leaves out on purpose (NOT_IN_CLIENT, each with why, reachable through `client.request`), and each method's path
 * parameters, query parameters, body (required or not, JSON or NDJSON) and answer (JSON or text) are the document's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentdClient, NOT_IN_CLIENT, ROUTES, type RouteInfo } from '../../src/client/index.ts';
import { OPERATIONS } from '../../src/client/routes.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

interface Operation {
  parameters?: { name: string; in: string }[];
  requestBody?: { required: boolean; content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}
let app: RunningApp;
let paths: Record<string, Record<string, Operation>>;

beforeAll(async () => {
  app = await startApp({ memory: {} });
  const doc = await new AgentdClient({ baseUrl: app.url }).api.openApi();
  paths = doc.paths as typeof paths;
});
afterAll(() => app.stop());

const keyOf = (info: RouteInfo) => `${info.method} ${info.path.replace(/:(\w+)/g, '{$1}')}`;

describe('the client and the OpenAPI document', () => {
  it('lists every operation once: a method, or one it leaves out on purpose', () => {
    const documented = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const listed = Object.entries(OPERATIONS).map(([key, op]) => (typeof op === 'string' ? key : keyOf(op)));
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.sort()).toEqual(documented.sort());
    // ROUTES and NOT_IN_CLIENT are the list's two parts.
    expect(Object.values(ROUTES)).toEqual(Object.values(OPERATIONS).filter((op) => typeof op !== 'string'));
    expect(Object.keys(NOT_IN_CLIENT)).toEqual(Object.keys(OPERATIONS).filter((k) => k.includes(' ')));
  });

  it.each(Object.entries(ROUTES))('%s takes and answers what the document says', (_name, info: RouteInfo) => {
    const op = paths[keyOf(info).split(' ')[1]!]?.[info.method.toLowerCase()];
    expect(op).toBeDefined();
    const params = (where: string) => (op?.parameters ?? []).filter((p) => p.in === where).map((p) => p.name);
    expect(params('path')).toEqual([...info.path.matchAll(/:(\w+)/g)].map((m) => m[1]));
    expect(params('query').sort()).toEqual([...(info.query ?? [])].sort());
    const body = op?.requestBody;
    const kind = !body
      ? undefined
      : 'application/x-ndjson' in body.content
        ? 'ndjson'
        : body.required
          ? 'json'
          : 'json?';
    expect(kind).toBe(info.body);
    const success = Object.entries(op?.responses ?? {}).find(([status]) => status.startsWith('2'))?.[1];
    const json = Object.keys(success?.content ?? {}).some(
      (type) => type === 'application/json' || type.endsWith('+json'),
    );
    expect(!json).toBe(info.text === true);
  });
});
