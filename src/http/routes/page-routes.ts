import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { AppError } from '../../errors/index.ts';
import type { Route, RouteResult } from '../route.ts';

const WEB = join(import.meta.dirname, '..', '..', '..', 'web');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * What a page may do: load its own files, talk to this origin (REST and WebSocket), show images
 * the user picked. No inline script, no third party, no framing.
 */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** The files of one folder under web/, read once: name → reply. */
function folder(name: string): Map<string, RouteResult> {
  const files = new Map<string, RouteResult>();
  for (const file of readdirSync(join(WEB, name))) {
    const contentType = TYPES[extname(file)];
    if (contentType) files.set(file, { body: readFileSync(join(WEB, name, file), 'utf8'), contentType, headers: PAGE_HEADERS });
  }
  return files;
}

/**
 * The web console: `GET /` (an HTTP GET; a WebSocket upgrade at `/` stays the API) and its files.
 * Public routes: the pages carry no secret and no data; everything they show comes from the API,
 * which asks for the key.
 */
export function pageRoutes(): Route[] {
  const files = folder('console');
  const file = (name: string): RouteResult => {
    const found = files.get(name);
    if (!found) throw new AppError('INVALID_REQUEST', `Unknown route /console/${name}`, { issue: 'no such endpoint' });
    return found;
  };
  return [
    { method: 'GET', path: '/', summary: 'The web console (web mode)', public: true, handler: () => file('index.html') },
    { method: 'GET', path: '/console/:file', summary: "The console's scripts and styles", public: true, handler: (ctx) => file(ctx.params.file ?? '') },
  ];
}
