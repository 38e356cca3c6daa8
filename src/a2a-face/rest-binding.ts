/**
 * A2A's HTTP+JSON binding (docs/a2a.md) as a mapping onto the face: every route is one v1.0 method answered by
 * `face.invoke`, the JSON-RPC binding's own dispatch, so the two cannot drift; v0.3 routes (`/v1/...`) are
 * translated both ways (legacy-rest.ts). Refusals are the face's thrown AppErrors.
 */
import { AppError } from '../errors/index.ts';
import type { A2aFace } from './face.ts';
import type { A2aCallContext, Answer } from './face-types.ts';
import { legacyPushConfigIn, legacyPushConfigOut, sendRequestIn, streamResponseOut } from './legacy-rest.ts';
import type { V1Method } from './rpc-methods.ts';

export interface RestRoute {
  method: V1Method;
  /** A v0.3 route (`/v1/...`): v0.3 proto JSON in and out. */
  legacy: boolean;
  /** The decoded task id of a `/tasks/{id}...` route. */
  taskId?: string;
  /** The decoded config id of a `/tasks/{id}/pushNotificationConfigs/{configId}` route. */
  configId?: string;
}

interface RoutePattern {
  pattern: RegExp;
  verbs: string[];
  method: V1Method;
  /** Another method for some verbs of the same path. */
  byVerb?: Record<string, V1Method>;
  only?: 'v1.0' | 'v0.3';
}

// First match decides; the task id is the first group, as sent.
const ROUTES: RoutePattern[] = [
  { pattern: /^\/message:send$/, verbs: ['POST'], method: 'SendMessage' },
  { pattern: /^\/message:stream$/, verbs: ['POST'], method: 'SendStreamingMessage' },
  { pattern: /^\/tasks$/, verbs: ['GET'], method: 'ListTasks', only: 'v1.0' },
  { pattern: /^\/extendedAgentCard$/, verbs: ['GET'], method: 'GetExtendedAgentCard', only: 'v1.0' },
  { pattern: /^\/card$/, verbs: ['GET'], method: 'GetExtendedAgentCard', only: 'v0.3' },
  {
    pattern: /^\/tasks\/(.+)\/pushNotificationConfigs$/,
    verbs: ['GET', 'POST'],
    method: 'CreateTaskPushNotificationConfig',
    byVerb: { GET: 'ListTaskPushNotificationConfigs' },
  },
  {
    pattern: /^\/tasks\/(.+)\/pushNotificationConfigs\/([^/]+)$/,
    verbs: ['GET', 'DELETE'],
    method: 'GetTaskPushNotificationConfig',
    byVerb: { DELETE: 'DeleteTaskPushNotificationConfig' },
  },
  { pattern: /^\/tasks\/(.+):cancel$/, verbs: ['POST'], method: 'CancelTask' },
  { pattern: /^\/tasks\/(.+):subscribe$/, verbs: ['GET', 'POST'], method: 'SubscribeToTask' },
  { pattern: /^\/tasks\/(.+)$/, verbs: ['GET'], method: 'GetTask' },
];

function decodeTaskId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new AppError('INVALID_REQUEST', 'Malformed task id in the path', { issue: `bad escape in "${raw}"` });
  }
}

/**
 * The route of `verb path` under the base (`{id}` percent-encoded as one segment, or as it is): `undefined` for
 * an unknown path, `{ allow }` for a known one asked with another verb.
 */
export function matchRestRoute(verb: string, path: string): RestRoute | { allow: string } | undefined {
  const legacy = path.startsWith('/v1/');
  const rest = legacy ? path.slice(3) : path;
  for (const { pattern, verbs, method, byVerb, only } of ROUTES) {
    const m = pattern.exec(rest);
    if (!m || (only && only !== (legacy ? 'v0.3' : 'v1.0'))) continue;
    if (!verbs.includes(verb)) return { allow: verbs.join(', ') };
    return {
      method: byVerb?.[verb] ?? method,
      legacy,
      ...(m[1] !== undefined && { taskId: decodeTaskId(m[1]) }),
      ...(m[2] !== undefined && { configId: decodeTaskId(m[2]) }),
    };
  }
  return undefined;
}

const INTEGER_PARAMS = new Set(['pageSize', 'historyLength']);
const BOOLEAN_PARAMS = new Set(['includeArtifacts']);

/** Query parameters as the method's params: integers and booleans typed, anything else as sent. */
function paramsOfQuery(query: URLSearchParams): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, value] of query) {
    if (name in params) continue;
    params[name] =
      INTEGER_PARAMS.has(name) && /^-?\d+$/.test(value)
        ? Number(value)
        : BOOLEAN_PARAMS.has(name) && (value === 'true' || value === 'false')
          ? value === 'true'
          : value;
  }
  return params;
}

interface RestInput {
  query: URLSearchParams;
  /** The parsed JSON body; `undefined` without one. */
  body: unknown;
}

export function createA2aRest(face: A2aFace) {
  const paramsOf = (route: RestRoute, { query, body }: RestInput): unknown => {
    const id = route.taskId;
    switch (route.method) {
      case 'SendMessage':
      case 'SendStreamingMessage':
        return route.legacy ? sendRequestIn(body) : body;
      case 'ListTasks':
        return paramsOfQuery(query);
      case 'GetTask':
        return { ...paramsOfQuery(query), id };
      case 'CreateTaskPushNotificationConfig':
        return route.legacy ? legacyPushConfigIn(body, id) : { ...(body as object), taskId: id };
      case 'ListTaskPushNotificationConfigs':
        return { ...paramsOfQuery(query), taskId: id };
      case 'GetTaskPushNotificationConfig':
      case 'DeleteTaskPushNotificationConfig':
        return { taskId: id, id: route.configId };
      default:
        return id === undefined ? {} : { id };
    }
  };

  return {
    async call(route: RestRoute, input: RestInput, ctx: Omit<A2aCallContext, 'version'>): Promise<Answer<unknown>> {
      const out = !route.legacy
        ? (result: unknown) => result
        : route.method.endsWith('PushNotificationConfig') || route.method.endsWith('PushNotificationConfigs')
          ? legacyPushConfigOut
          : streamResponseOut;
      // The JSON-RPC face's own dispatch: its refusals are thrown as AppErrors, encoded by the endpoint.
      const answer = await face.invoke(route.method, paramsOf(route, input), { ...ctx, version: '1.0' });
      if (answer.kind === 'json') return { kind: 'json', body: out(answer.body.result) };
      const { events } = answer;
      return {
        kind: 'stream',
        events: (async function* () {
          for await (const event of events) yield out(event.result);
        })(),
      };
    },
  };
}
export type A2aRest = ReturnType<typeof createA2aRest>;
