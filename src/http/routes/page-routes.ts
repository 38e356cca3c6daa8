import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { AppError } from '../../errors/index.ts';
import { PathNotFound } from '../admission.ts';
import { packagePath } from '../../package-info.ts';
import { openApiDocument, type OpenApiOptions } from '../openapi.ts';
import type { Route, RouteResult } from '../route.ts';
import { appBridgeScript } from './app-host-routes.ts';
import { RESPONSES } from './shapes.ts';

const WEB = packagePath('web');
/**
 * A browser library's folder: dist/<folder>/, where tools/build.mjs copies its files (so the package depends on
 * none of them: swagger-ui-dist, marked, dompurify are devDependencies); else, in a checkout not built since,
 * the devDependency's own `sub` folder.
 */
function vendorDir(folder: string, pkg: string, sub = ''): string {
  const built = packagePath('dist', folder);
  if (existsSync(built)) return built;
  try {
    // The package's entry, then up to its own folder (dompurify's exports do not list its package.json).
    let dir = dirname(createRequire(import.meta.url).resolve(pkg));
    while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
    return join(dir, sub);
  } catch {
    return built;
  }
}
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

/** A page loads its own files, talks to this origin, shows images the user picked: no inline script, no framing. */
const csp = (style: string, frames: string) =>
  `default-src 'none'; script-src 'self'; style-src ${style}; img-src 'self' data: blob:; connect-src 'self' ws: wss:; frame-src ${frames}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
const pageHeaders = (style = "'self'", frames = "'none'") => ({
  'Content-Security-Policy': csp(style, frames),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
});

/** Files by name, each read on first request and kept; any other name is an unknown route (404). */
function files(entries: [name: string, path: string][], headers: Record<string, string>, prefix: string) {
  const paths = new Map(entries.filter(([name]) => TYPES[extname(name)]));
  const cache = new Map<string, RouteResult>();
  return (name: string): RouteResult => {
    const path = paths.get(name);
    if (!path) throw new PathNotFound(`${prefix}${name}`);
    const cached = cache.get(name);
    if (cached) return cached;
    const reply = { body: readFileSync(path, 'utf8'), contentType: TYPES[extname(name)] ?? 'text/plain', headers };
    cache.set(name, reply);
    return reply;
  };
}

/** A public GET of a page (`text/html`) or of its scripts and styles (`:file`, `text/javascript`). */
const pageRoute = (path: string, summary: string, handler: Route['handler']): Route => ({
  method: 'GET',
  path,
  summary,
  scope: 'public',
  doc: { contentType: path.endsWith(':file') ? 'text/javascript' : 'text/html' },
  handler,
});
const folder = (name: string) =>
  readdirSync(join(WEB, name)).map((file): [string, string] => [file, join(WEB, name, file)]);
/** `web/shared` (the pages' socket and key, `live.js`): served beside each page's own files, so each imports `./live.js`. */
const withShared = (name: string) => [...folder(name), ...folder('shared')];

/**
 * The web console, `GET /` (a WebSocket upgrade at `/` stays the API), and its files. Public: the pages carry no
 * secret and no data; what they show comes from the API, which asks for the key.
 */
export function consoleRoutes(): Route[] {
  // The replies' markdown: marked and DOMPurify's browser ES modules, as /console/marked.js and /console/purify.js.
  const vendored: [string, string][] = [
    ['marked.js', join(vendorDir('marked', 'marked', 'lib'), 'marked.esm.js')],
    ['purify.js', join(vendorDir('dompurify', 'dompurify', 'dist'), 'purify.es.mjs')],
  ];
  // The console frames its MCP Apps' sandbox proxy (/console/apps/sandbox, app-host-routes.ts), and nothing else.
  const file = files([...withShared('console'), ...vendored], pageHeaders("'self'", "'self'"), '/console/');
  return [
    pageRoute('/', 'The web console (web mode)', () => file('index.html')),
    pageRoute('/console/:file', "The console's scripts and styles", (ctx) =>
      ctx.params.file === 'app-bridge.js' ? appBridgeScript() : file(ctx.params.file ?? ''),
    ),
  ];
}

/** The OpenAPI document of every route in `table()` (built once) and its docs page (no CDN). Public. */
export function apiDocRoutes(table: () => Route[], options: OpenApiOptions): Route[] {
  let document: string | undefined;
  // swagger-ui sets inline styles, so its page allows them; scripts stay 'self' only.
  const swaggerUi = vendorDir('swagger-ui', 'swagger-ui-dist');
  const file = files(
    [
      ...folder('docs'),
      ['swagger-ui.css', join(swaggerUi, 'swagger-ui.css')],
      ['swagger-ui-bundle.js', join(swaggerUi, 'swagger-ui-bundle.js')],
    ],
    pageHeaders("'self' 'unsafe-inline'"),
    '/api/docs/',
  );
  return [
    {
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'The OpenAPI 3.1 description of these routes',
      scope: 'public',
      doc: { response: RESPONSES.openApi },
      handler: () => ({
        body: (document ??= JSON.stringify(openApiDocument(table(), options))),
        contentType: 'application/json; charset=utf-8',
      }),
    },
    pageRoute('/api/docs', 'Interactive API docs (swagger-ui, served locally)', () => file('index.html')),
    pageRoute('/api/docs/:file', "The docs page's scripts and styles", (ctx) => file(ctx.params.file ?? '')),
  ];
}

/**
 * The inspector page (`GET /inspect`, reading `/inspect/ws`) and its files; off, it says how to turn it on.
 * Public: the stream asks for the key. `status.json` answers `{"enabled": …}` either way, for the console's link.
 */
export function inspectRoutes(enabled: boolean): Route[] {
  const layouts: [string, string] = ['layouts.json', packagePath('machines', 'layouts.json')];
  const file = files([...withShared('inspect'), layouts], pageHeaders(), '/inspect/');
  // The bridge page may frame Stately's hosted inspector, and nothing else.
  const bridge = files(
    [['stately.html', join(WEB, 'inspect', 'stately.html')]],
    pageHeaders("'self'", 'https://stately.ai'),
    '/inspect/',
  );
  const status: RouteResult = {
    body: JSON.stringify({ enabled }),
    contentType: TYPES['.json'] ?? 'application/json',
    headers: pageHeaders(),
  };
  const serve = (name: string, from = file): RouteResult => {
    if (name === 'status.json') return status;
    if (!enabled)
      throw new AppError(
        'INVALID_REQUEST',
        'The inspector is off: start agentd with --inspect (or set server.inspect: true)',
        { reason: 'inspector_off' },
      );
    return from(name);
  };
  return [
    pageRoute('/inspect', 'The live state-machine inspector page (with --inspect)', () => serve('index.html')),
    pageRoute('/inspect/stately', "The stream in Stately's hosted inspector (a bridge page)", () =>
      serve('stately.html', bridge),
    ),
    // `/inspect/` (a typed address, a bookmark) is the page too: its files' addresses are absolute.
    pageRoute('/inspect/', 'The inspector page, with a trailing slash', () => serve('index.html')),
    pageRoute('/inspect/:file', "The inspector pages' scripts and styles", (ctx) => serve(ctx.params.file ?? '')),
  ];
}
