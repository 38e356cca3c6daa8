/**
 * The client and /api/openapi.json agree: every operation of the document served by a running agentd is a method
 * of the client (ROUTES) or one it leaves out on purpose (NOT_IN_CLIENT, each with why, reachable through
 * `client.request`), never both, and each method's path parameters, query parameters, body (required or not, JSON
 * or NDJSON) and answer (JSON or text) are the document's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentdClient, NOT_IN_CLIENT, ROUTES, type RouteInfo } from '../../src/client/index.ts';
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
  it('has a method for every operation but the ones it leaves out on purpose', () => {
    const documented = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const methods = Object.values(ROUTES).map(keyOf);
    expect(new Set(methods).size).toBe(methods.length);
    expect(methods.filter((k) => k in NOT_IN_CLIENT)).toEqual([]);
    expect([...methods, ...Object.keys(NOT_IN_CLIENT)].sort()).toEqual(documented.sort());
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
