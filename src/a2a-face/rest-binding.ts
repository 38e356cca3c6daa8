/**
 * A2A's HTTP+JSON binding as a mapping onto the face: every route is one v1.0 method answered by
 * `face.invoke`, the very dispatch of the JSON-RPC binding, so the two bindings cannot drift.
 *
 * Contracts:
 * - `matchRestRoute(verb, path)` reads a path under the binding's base (`A2A_REST_PATH`): v1.0's
 *   `POST /message:send`, `POST /message:stream`, `GET /tasks`, `GET /tasks/{id}`, `POST /tasks/{id}:cancel`,
 *   `GET|POST /tasks/{id}:subscribe`, `GET /extendedAgentCard`, the push-notification config routes under
 *   `/tasks/{id}/pushNotificationConfigs`; v0.3's are the same under `/v1` (no `GET /v1/tasks`; the card is
 *   `GET /v1/card`). `{id}` is the task id percent-encoded as one segment (`ctx%2Fturn`, as the SDK sends
 *   it) or as it is (`ctx/turn`). An unknown path is `undefined`; a known one asked with another verb is
 *   `{ allow }`.
 * - `createA2aRest(face).call(route, input, ctx)` answers `{ kind: 'json', body }` or `{ kind: 'stream',
 *   events }` (the bodies of the SSE `data:` lines); a refusal throws the face's AppError, whose code the
 *   endpoint maps to an HTTP status. Query values are typed as the method's params (`pageSize=2` is 2), a
 *   value that is not is passed as the string it is and refused by the method's validation.
 * - v0.3 routes speak the v0.3 proto JSON (legacy-rest.ts translates both ways).
 */
import { AppError } from '../errors/index.ts';
import type { A2aFace } from './face.ts';
import type { A2aCallContext } from './face-types.ts';
import { sendRequestIn, streamResponseOut } from './legacy-rest.ts';

type RestMethod =
  | 'SendMessage'
  | 'SendStreamingMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'SubscribeToTask'
  | 'GetExtendedAgentCard'
  | 'CreateTaskPushNotificationConfig';

export interface RestRoute {
  method: RestMethod;
  /** A v0.3 route (`/v1/...`): v0.3 proto JSON in and out. */
  legacy: boolean;
  /** The decoded task id of a `/tasks/{id}...` route. */
  taskId?: string;
}

interface RoutePattern {
  pattern: RegExp;
  verbs: string[];
  method: RestMethod;
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
  },
  {
    pattern: /^\/tasks\/(.+)\/pushNotificationConfigs\/[^/]+$/,
    verbs: ['GET', 'DELETE'],
    method: 'CreateTaskPushNotificationConfig',
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

/** The route of `verb path` (see the contracts). */
export function matchRestRoute(verb: string, path: string): RestRoute | { allow: string } | undefined {
  const legacy = path.startsWith('/v1/');
  const rest = legacy ? path.slice(3) : path;
  for (const { pattern, verbs, method, only } of ROUTES) {
    const m = pattern.exec(rest);
    if (!m || (only && only !== (legacy ? 'v0.3' : 'v1.0'))) continue;
    if (!verbs.includes(verb)) return { allow: verbs.join(', ') };
    return { method, legacy, ...(m[1] !== undefined && { taskId: decodeTaskId(m[1]) }) };
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

export type RestAnswer = { kind: 'json'; body: unknown } | { kind: 'stream'; events: AsyncIterable<unknown> };

export interface RestInput {
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
      default:
        return id === undefined ? {} : { id };
    }
  };

  return {
    async call(route: RestRoute, input: RestInput, ctx: Omit<A2aCallContext, 'version'>): Promise<RestAnswer> {
      const out = route.legacy ? streamResponseOut : (result: unknown) => result;
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
