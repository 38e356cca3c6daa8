/**
 * `GET /api/oauth/callback`, where the browser returns from a tool server's OAuth sign-in (docs/tool-servers.md).
 * Public: what protects it is `state`, naming a pending authorization only an admin was shown (any other changes
 * nothing), and the PKCE verifier, which never left agentd. A principal's own sign-in completes only in the browser
 * that began it, with its cookie (sign-in-cookie.ts): a link passed on signs nobody in. It answers a small HTML page
 * (no script) naming whose sign-in it completed; the code, the state and any token never appear in it or in a log.
 */
import { isAppError } from '../../errors/index.ts';
import type { Route, RouteResult } from '../route.ts';
import { clearedSignInCookie, signInCookieOf } from './sign-in-cookie.ts';

const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const page = (status: number, title: string, text: string, extra: Record<string, string> = {}): RouteResult => ({
  status,
  contentType: 'text/html; charset=utf-8',
  headers: { ...HEADERS, ...extra },
  body:
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<style>body{font:16px system-ui,sans-serif;margin:3rem auto;max-width:36rem;padding:0 1rem}</style></head>` +
    `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`,
});

const MAX_PARAM = 2048;

export function oauthRoutes(): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/oauth/callback',
      summary: "Where the browser returns from a tool server's OAuth sign-in",
      scope: 'public',
      doc: { contentType: 'text/html', contentDescription: 'A page saying whether the tool server is now connected' },
      async handler({ query, bus, headers }) {
        const state = query.get('state') ?? '';
        const code = query.get('code') ?? '';
        // RFC 9207: the issuer that answered, checked against the one the sign-in began with (the SDK's auth()).
        const iss = query.get('iss') ?? undefined;
        const refused = query.get('error');
        if (refused !== null) {
          return page(
            400,
            'Sign-in refused',
            `The authorization server answered "${refused.slice(0, 200)}". Start the sign-in again from agentd.`,
          );
        }
        if (!state || !code || state.length > MAX_PARAM || code.length > MAX_PARAM || (iss?.length ?? 0) > MAX_PARAM) {
          return page(
            400,
            'Sign-in failed',
            'The request lacks a valid state or code. Start the sign-in again from agentd.',
          );
        }
        const binding = signInCookieOf(headers.cookie, state);
        const cleared = { 'Set-Cookie': clearedSignInCookie(state) };
        try {
          const { server, principal } = await bus.execute('mcp.oauthCallback', {
            state,
            code,
            ...(iss !== undefined && { iss }),
            ...(binding !== undefined && { binding }),
          });
          const done =
            principal === undefined
              ? `The tool server "${server.name}" is connected.`
              : `The sign-in of ${principal === '' ? 'the unnamed principal' : `principal "${principal}"`} to the tool server "${server.name}" is complete: its tools now act for that principal.`;
          return page(200, 'Signed in', `${done} You can close this page.`, cleared);
        } catch (err) {
          if (!isAppError(err)) throw err;
          const status = err.code === 'INVALID_REQUEST' ? 400 : 502;
          return page(status, 'Sign-in failed', err.message, cleared);
        }
      },
    },
  ];
}
