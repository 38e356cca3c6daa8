// What `npm run build` (tools/build.mjs) compiles into dist/, and the files that say how: the test setup
// (test/support/built-dist.ts) rebuilds when any of them is newer than dist/.
/** The folders compiled. */
export const SOURCES = ['src', 'machines', 'tools/demo', 'tools/simulator'];
/** A development script under them, not part of the package. */
export const EXCLUDED = ['src/config/write-schema.ts'];
/** The build's own files and config. */
export const BUILD_FILES = ['tsconfig.json', 'tools/build.mjs', 'tools/build-notices.mjs', 'tools/build-sources.mjs'];

/**
 * esbuild's options for the console's MCP Apps host module (`/console/app-bridge.js`): ext-apps' host side and what it
 * imports, one minified browser ES module. tools/build.mjs writes it into dist/ext-apps/; src/http/routes/app-bridge.ts
 * bundles it on first request when dist/ has none (a checkout run with tsx, before any build).
 */
export const APP_BRIDGE_BUNDLE = {
  stdin: {
    contents: "export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';",
    resolveDir: import.meta.dirname,
    loader: 'js',
  },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
};
