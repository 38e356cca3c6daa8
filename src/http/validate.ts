import type { z } from 'zod';
import { AppError } from '../errors/index.ts';

const valueAt = (input: unknown, path: PropertyKey[]): unknown => {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
};

/**
 * Parses edge input: an absent required field is MISSING_FIELD naming it (dotted path); any other problem is
 * INVALID_REQUEST with `details.field` (the first problem's) and every issue.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'request body'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const missing = issues.find(
    (i) =>
      (i.code === 'invalid_type' || i.code === 'invalid_union' || i.code === 'invalid_value') &&
      i.path.length > 0 &&
      valueAt(input, i.path) === undefined,
  );
  if (missing) {
    const field = missing.path.map(String).join('.');
    throw new AppError('MISSING_FIELD', `Missing required field: ${field}`, { field });
  }
  if (input === undefined || input === null || typeof input !== 'object') {
    throw new AppError('INVALID_REQUEST', `The ${what} must be a JSON object`, { issue: 'not an object' });
  }
  const listed = issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const first = listed[0];
  throw new AppError(
    'INVALID_REQUEST',
    `Invalid ${what}${first ? `: ${first.path || '(root)'}: ${first.message}` : ''}`,
    { ...(first?.path && { field: first.path }), issues: listed },
  );
}

/**
 * Parses a query string given each parameter's first value (a string: the schema coerces). An absent required
 * one is MISSING_FIELD; any other problem is INVALID_REQUEST with the first issue's message (a whole sentence).
 */
export function parseQuery<S extends z.ZodType>(schema: S, query: URLSearchParams): z.output<S> {
  const input: Record<string, string> = {};
  for (const [name, value] of query) if (!Object.hasOwn(input, name)) input[name] = value;
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const field = first?.path.map(String).join('.') ?? '';
  if (field !== '' && !Object.hasOwn(input, field))
    throw new AppError('MISSING_FIELD', `Missing required field: ${field}`, { field });
  throw new AppError('INVALID_REQUEST', first?.message ?? 'Invalid query string', { ...(field !== '' && { field }) });
}
