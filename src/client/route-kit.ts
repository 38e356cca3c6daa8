/**
 * How the client's routes are written (routes.ts): a route's request shape (plain data, what the browser build
 * carries) and, as a type only, what it takes and answers (`route<Answer, Body, Query>()(info)`).
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

/** One route's types: `answer`, `body` (never: it takes none), `query` (never: it takes none). */
export interface Io<A, B = never, Q = never> {
  answer: A;
  body: B;
  query: Q;
}

/** The key of a route's types: a type only, never a property at run time. */
declare const types: unique symbol;
/** A method's route: its request's shape, and what it takes and answers (`T`, a type only). */
export type TypedRoute<I extends RouteInfo, T> = I & { readonly [types]?: T };
/** What route `T` takes and answers (its Io). */
export type IoOf<T> = T extends { readonly [types]?: infer X } ? NonNullable<X> : never;

/** The route `info`, taking body B and query Q and answering A; at run time `info` itself. */
export const route =
  <A, B = never, Q = never>() =>
  <const I extends RouteInfo>(info: I): TypedRoute<I, Io<A, B, Q>> =>
    info;

/** The path parameter names of a route path (`/a/:b/c/:d` → `b | d`). */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** The path parameter names of `path`, in order. */
export const pathParamsOf = (path: string): string[] => [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
