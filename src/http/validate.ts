import type { z } from 'zod';
import { AppError } from '../errors/index.ts';
import type { ImagePart } from '../llm/types.ts';

const valueAt = (input: unknown, path: PropertyKey[]): unknown => {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
};

/**
 * Parses edge input with a schema. A required field that is absent gives MISSING_FIELD naming it
 * (dotted path); any other problem gives INVALID_REQUEST with `details.field` (the first problem's
 * dotted path) and every issue.
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
    {
      ...(first?.path && { field: first.path }),
      issues: listed,
    },
  );
}

/**
 * Parses a query string with a schema, given each parameter's first value as a string (so its
 * schema coerces numbers). An absent required parameter gives MISSING_FIELD naming it; any other
 * problem gives INVALID_REQUEST with the first problem's message and `details.field`: a query
 * schema's messages are whole sentences ("since must be a non-negative integer").
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

/** Largest decoded image accepted (the spec's 10 MB upload limit). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The image types recognised from their first bytes when `mimeType` is not given. */
const SIGNATURES: { mimeType: string; matches: (b: Buffer) => boolean }[] = [
  {
    mimeType: 'image/png',
    matches: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { mimeType: 'image/jpeg', matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mimeType: 'image/gif', matches: (b) => ['GIF87a', 'GIF89a'].includes(b.toString('latin1', 0, 6)) },
  {
    mimeType: 'image/webp',
    matches: (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
  },
];

/** The MIME type of an image from its first bytes (PNG, JPEG, GIF, WebP), or undefined. */
export function sniffImageType(bytes: Buffer): string | undefined {
  return SIGNATURES.find((s) => s.matches(bytes))?.mimeType;
}

/**
 * Checks `imageData` of a message: real base64 (required), an image MIME type (sniffed from the
 * bytes when absent: PNG, JPEG, GIF or WebP), at most 10 MB decoded.
 */
export function validateImage(image: { base64?: string | undefined; mimeType?: string | undefined }): ImagePart {
  const fail = (issue: string) =>
    new AppError('INVALID_REQUEST', `Invalid imageData: ${issue}`, { field: 'imageData', issue });
  if (image.base64 === undefined)
    throw new AppError('MISSING_FIELD', 'Missing required field: imageData.base64', { field: 'imageData.base64' });
  if (image.mimeType !== undefined && !/^image\/[a-z0-9.+-]+$/i.test(image.mimeType))
    throw fail(`mimeType "${image.mimeType}" is not an image type`);
  const b64 = image.base64.replace(/\s+/g, '');
  if (b64.length === 0 || b64.length % 4 !== 0 || !BASE64.test(b64)) throw fail('base64 is not valid base64');
  const bytes = (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);
  if (bytes > MAX_IMAGE_BYTES) throw fail(`image is ${bytes} bytes; the limit is ${MAX_IMAGE_BYTES}`);
  const mimeType = image.mimeType ?? sniffImageType(Buffer.from(b64.slice(0, 24), 'base64'));
  if (mimeType === undefined) throw fail('mimeType is missing and the bytes are not PNG, JPEG, GIF or WebP');
  return { mimeType: mimeType.toLowerCase(), base64: b64 };
}
