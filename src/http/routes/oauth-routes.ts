/**
 * `GET /api/oauth/callback`, where the browser returns from a tool server's OAuth sign-in (docs/tool-servers.md).
 * Public: what protects it is `state`, naming a pending authorization only an admin was shown (any other changes
 * nothing), and the PKCE verifier, which never left agentd. It answers a small HTML page (no script); the code,
 * the state and any token never appear in it or in a log.
 */
import { isAppError } from '../../errors/index.ts';
import type { Route, RouteResult } from '../route.ts';

const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const page = (status: number, title: string, text: string): RouteResult => ({
  status,
  contentType: 'text/html; charset=utf-8',
  headers: HEADERS,
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
      async handler({ query, bus }) {
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
        try {
          const { server, principal } = await bus.execute('mcp.oauthCallback', {
            state,
            code,
            ...(iss !== undefined && { iss }),
          });
          const done = principal
            ? `You are signed in to the tool server "${server.name}": its tools now act for you.`
            : `The tool server "${server.name}" is connected.`;
          return page(200, 'Signed in', `${done} You can close this page.`);
        } catch (err) {
          if (!isAppError(err)) throw err;
          const status = err.code === 'INVALID_REQUEST' ? 400 : 502;
          return page(status, 'Sign-in failed', err.message);
        }
      },
    },
  ];
}
