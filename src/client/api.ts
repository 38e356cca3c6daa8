/**
 * A method per route of ROUTES (`client.api.<name>(args, options)`), typed by RouteTypes. `args` holds the path
 * parameters by name, `query` and `body`; an unknown key, a missing path parameter, a query value that is not a
 * string, number or boolean, or a body of the wrong type is refused (CLIENT_INPUT) before anything is sent.
 */
import { inputError } from './errors.ts';
import type { CallOptions, Request, Transport } from './http.ts';
import { checkKeys } from './options.ts';
import { pathParamsOf, type PathParams, type RouteInfo } from './route-kit.ts';
import { ROUTES, type RouteName, type RouteTypes } from './routes.ts';

type Info<K extends RouteName> = (typeof ROUTES)[K];
type PathArgs<K extends RouteName> = { [P in PathParams<Info<K>['path']>]: string };
type BodyArgs<K extends RouteName> = [RouteTypes[K]['body']] extends [never]
  ? unknown
  : Info<K> extends { body: 'json?' }
    ? { body?: RouteTypes[K]['body'] }
    : { body: RouteTypes[K]['body'] };
type QueryArgs<K extends RouteName> = [RouteTypes[K]['query']] extends [never]
  ? unknown
  : { query?: RouteTypes[K]['query'] };

/** What the method of route K takes. */
export type RouteArgs<K extends RouteName> = PathArgs<K> & BodyArgs<K> & QueryArgs<K>;
export type RouteAnswer<K extends RouteName> = RouteTypes[K]['answer'];
export type RouteMethod<K extends RouteName> =
  Record<never, never> extends RouteArgs<K>
    ? (args?: RouteArgs<K>, options?: CallOptions) => Promise<RouteAnswer<K>>
    : (args: RouteArgs<K>, options?: CallOptions) => Promise<RouteAnswer<K>>;
export type Api = { [K in RouteName]: RouteMethod<K> };

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request of route `name` with `args`, or a CLIENT_INPUT error. */
export function requestOf(name: string, info: RouteInfo, args: unknown): Request {
  if (args !== undefined && !isPlainObject(args)) throw inputError(`${name}: arguments must be an object`);
  const given: Record<string, unknown> = args ?? {};
  const params = pathParamsOf(info.path);
  checkKeys(`argument of ${name}`, given, [
    ...params,
    ...(info.query ? ['query'] : []),
    ...(info.body ? ['body'] : []),
  ]);
  let path = info.path;
  for (const param of params) {
    const value = given[param];
    if (typeof value !== 'string' || value === '')
      throw inputError(`${name}: "${param}" must be a non-empty string`, { field: param });
    path = path.replace(`:${param}`, encodeURIComponent(value));
  }
  const search = new URLSearchParams();
  if (given.query !== undefined) {
    if (!isPlainObject(given.query)) throw inputError(`${name}: query must be an object`, { field: 'query' });
    checkKeys(`query parameter of ${name}`, given.query, info.query ?? []);
    for (const [key, value] of Object.entries(given.query)) {
      if (value === undefined) continue;
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
        throw inputError(`${name}: query "${key}" must be a string, number or boolean`, { field: key });
      search.set(key, String(value));
    }
  }
  const query = search.size > 0 ? `?${search.toString()}` : '';
  const request: Request = { method: info.method, path: `${path}${query}`, ...(info.text && { text: true }) };
  const { body } = given;
  if (info.body === 'ndjson') {
    if (typeof body !== 'string') throw inputError(`${name}: body must be NDJSON text`, { field: 'body' });
    return { ...request, body: { text: body, type: 'application/x-ndjson' } };
  }
  if (info.body === 'json' && body === undefined) throw inputError(`${name}: body is required`, { field: 'body' });
  if (body === undefined) return request;
  if (!isPlainObject(body)) throw inputError(`${name}: body must be a JSON object`, { field: 'body' });
  return { ...request, body: { json: body } };
}

export function createApi(transport: Transport): Api {
  const api: Record<string, unknown> = {};
  for (const [name, info] of Object.entries(ROUTES) as [RouteName, RouteInfo][])
    api[name] = async (args?: unknown, options?: CallOptions) => transport.call(requestOf(name, info, args), options);
  return api as Api;
}
