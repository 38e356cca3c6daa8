/**
 * What the web console needs to host MCP Apps (docs/console.md, "MCP Apps"), both public (they carry no data):
 * - `GET /console/apps/sandbox?csp=<json>`: the sandbox proxy page (web/apps/sandbox.html), the frame an app's html is
 *   handed to over postMessage. Its `Content-Security-Policy` is the app's own (`appCsp` of the `_meta.ui.csp` the
 *   query names, checked like a stored one: origins only, so a caller can make it no looser than an app may declare),
 *   whose `sandbox allow-scripts allow-forms` gives the page an opaque origin: another origin than the console, with no
 *   access to its storage, cookies or document; the app's own frame, made by the page from the html (`srcdoc`),
 *   inherits the policy. `frame-ancestors 'self'`: only agentd's own pages may embed it.
 * - `/console/app-bridge.js` (under the console's files): ext-apps' host side (AppBridge, PostMessageTransport) as one
 *   browser module, bundled by the build into dist/ext-apps/, or on first request in a checkout not built.
 */
import { existsSync, readFileSync } from 'node:fs';
import type * as Esbuild from 'esbuild';
import { z } from 'zod';
import { appUi } from '../../conversation/tool-app.ts';
import { AppError } from '../../errors/index.ts';
import { packagePath } from '../../package-info.ts';
import type { Route, RouteResult } from '../route.ts';
import { parseQuery } from '../validate.ts';
import { appCsp } from './app-routes.ts';

const MAX_CSP_QUERY = 16_384;
const cspQuery = z.object({ csp: z.string().max(MAX_CSP_QUERY).exactOptional() });
const cspShape = appUi.shape.csp.unwrap();

/** The `csp` query (a JSON `McpUiResourceCsp`) as kept, or INVALID_REQUEST. */
function cspOf(query: URLSearchParams) {
  const { csp } = parseQuery(cspQuery, query);
  if (csp === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(csp);
  } catch {
    throw new AppError('INVALID_REQUEST', 'csp must be JSON', { field: 'csp' });
  }
  const checked = cspShape.safeParse(parsed);
  if (!checked.success)
    throw new AppError('INVALID_REQUEST', 'csp must name origins only (McpUiResourceCsp)', { field: 'csp' });
  return checked.data;
}

export function appHostRoutes(): Route[] {
  let page: string | undefined;
  return [
    {
      method: 'GET',
      path: '/console/apps/sandbox',
      summary: "The console's MCP Apps sandbox proxy page (an opaque origin, under the app's CSP)",
      scope: 'public',
      doc: { contentType: 'text/html', errors: ['INVALID_REQUEST'] },
      handler({ query }) {
        const csp = cspOf(query);
        page ??= readFileSync(packagePath('web', 'apps', 'sandbox.html'), 'utf8');
        return {
          body: page,
          contentType: 'text/html; charset=utf-8',
          headers: {
            'Content-Security-Policy': `${appCsp(csp && { csp })}; frame-ancestors 'self'`,
            'X-Content-Type-Options': 'nosniff',
            'Referrer-Policy': 'no-referrer',
            'Cache-Control': 'no-store',
          },
        };
      },
    },
  ];
}

let bridge: Promise<RouteResult> | undefined;
/** `/console/app-bridge.js`: the built bundle, else one made now with esbuild (a development checkout). */
export function appBridgeScript(): Promise<RouteResult> {
  bridge ??= readBridge().then(
    (body) => ({
      body,
      contentType: 'text/javascript; charset=utf-8',
      headers: { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' },
    }),
    (err: unknown) => {
      bridge = undefined;
      throw err;
    },
  );
  return bridge;
}

async function readBridge(): Promise<string> {
  const built = packagePath('dist', 'ext-apps', 'app-bridge.js');
  if (existsSync(built)) return readFileSync(built, 'utf8');
  // A devDependency, named through a variable so the build does not bundle it: tools/build-sources.mjs's
  // APP_BRIDGE_BUNDLE, which src may not import, is the same bundle.
  const esbuild = 'esbuild';
  const { build } = (await import(esbuild)) as typeof Esbuild;
  const out = await build({
    stdin: {
      contents: "export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';",
      resolveDir: packagePath(),
      loader: 'js',
    },
    ...{ bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, write: false },
    logLevel: 'warning',
  });
  return out.outputFiles[0]?.text ?? '';
}
