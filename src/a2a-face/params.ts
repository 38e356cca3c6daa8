import type { z } from 'zod';
import { AppError } from '../errors/index.ts';

/** A method's params by its schema; the first problem is -32602 Invalid params naming its field. */
export function parseParams<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new AppError(
      'MISSING_FIELD',
      `Invalid params: ${r.error.issues[0]?.path.join('.') || 'params'}: ${r.error.issues[0]?.message ?? 'invalid'}`,
    );
  return r.data;
}
