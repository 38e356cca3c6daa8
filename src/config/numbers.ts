import { z } from 'zod';

/** A whole number above 0, `fallback` when left out (most sizes, counts and timeouts of the config). */
export const positiveInt = (fallback: number) => z.number().int().positive().default(fallback);

/** A whole number above 0 that may be left out (its default is decided where it is used). */
export const optionalPositiveInt = () => z.number().int().positive().optional();
