import type { CorsConfig } from '../config/schema.ts';

/**
 * Origin policy. A request without `Origin` (curl, SDKs, other agents) is allowed; a browser
 * request is allowed when its origin is listed (or `*` is), or when it is same-origin (its
 * Origin's host equals the Host header). Everything else is refused.
 */
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
    /** Headers for a response to an allowed cross-origin request (none when no Origin). */
    headers(origin: string): Record<string, string> {
      if (!origin || !(any || listed.has(origin))) return {};
      return { 'Access-Control-Allow-Origin': any ? '*' : origin, Vary: 'Origin' };
    },
    /** Headers for a preflight (OPTIONS) answer; `extraHeaders` are request headers the endpoint also allows. */
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
