// `npm run build`: bundles server.mjs and its dependencies into dist/server.mjs (ESM; CommonJS
// dependencies get a `require` of their own), as `mastra build` bundles an app for deployment.
import { build } from 'esbuild';

await build({
  entryPoints: ['server.mjs'],
  outfile: 'dist/server.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
