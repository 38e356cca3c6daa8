import type { CorsConfig } from '../config/schema.ts';

/** Origin policy: allowed without `Origin`, with a listed one (or `*`), or same-origin (its host is Host). */
export function createCors(config: CorsConfig) {
  const any = config.origins.includes('*');
  const listed = new Set(config.origins);
  const allowMethods = config.methods.join(', ');
  const allowHeaders = config.headers.join(', ');
  const maxAge = String(config.maxAge);

  const isAllowed = (origin: string, host: string): boolean => {
    if (!origin) return true;
    if (any || listed.has(origin)) return true;
    try {
      return new URL(origin).host === host;
    } catch {
      return false;
    }
  };

  return {
    isAllowed,
    /** For a listed Origin (any with `*`); none otherwise. */
    headers(origin: string): Record<string, string> {
      if (!origin || !(any || listed.has(origin))) return {};
      return { 'Access-Control-Allow-Origin': any ? '*' : origin, Vary: 'Origin' };
    },
    /** `extraHeaders`: request headers the endpoint allows too. */
    preflight(origin: string, extraHeaders: readonly string[] = []): Record<string, string> {
      return {
        ...this.headers(origin),
        'Access-Control-Allow-Methods': allowMethods,
        'Access-Control-Allow-Headers':
          extraHeaders.length === 0 ? allowHeaders : [allowHeaders, ...extraHeaders].join(', '),
        'Access-Control-Max-Age': maxAge,
      };
    },
  };
}
export type Cors = ReturnType<typeof createCors>;
