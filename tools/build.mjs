// `npm run build`: compiles into a fresh folder, then swaps it in for dist/ with two renames, so a
// process starting bin/agentd.js meanwhile (a test, a running demo) never finds dist/ half-written.
// When the fresh folder holds exactly what dist/ holds (the usual case for `npm pack`'s prepack in the
// test suite, right after its global setup built), dist/ is left alone: no instant without it; its
// dist/src/cli.js is touched, the stamp the test setup and the benchmarks compare with the sources.
//
// esbuild compiles, with no type check (`npm run typecheck` is that, in CI): the sources as tsx runs them in
// development, in a few seconds where tsc's emit took twelve. Each module of src/, machines/ and the shipped tools
// (demo, simulator) becomes its .js file, its relative imports pointing at .js (the benchmarks and a few tests load
// those). The two entries (dist/src/cli.js, dist/tools/demo/main.js) are then bundles in place, with the packages
// they import: a start reads a few files instead of ~650 (our ~250 modules and the packages'), about 30 % less CPU
// (0.52 → 0.38 s of CPU to ready; bench/suites/startup.ts measures starts). What an entry imports lazily is a chunk
// in dist/src/chunks/; dist/THIRD-PARTY-NOTICES.md names every bundled package with its licence text. Nothing of ours
// finds files next to its module (package-info.ts walks up to the package root), so one file serves.
//
// It also copies the API docs page's swagger-ui (a devDependency, swagger-ui-dist) into
// dist/swagger-ui/ with its licence and notice: the package ships those files and so depends on
// nothing that pulls in swagger-ui-dist's dependency @scarf/scarf (an install-time telemetry script).
// The console's markdown libraries (devDependencies marked and dompurify) are copied the same way:
// their browser ES modules and licences into dist/marked/ and dist/dompurify/. The console's MCP Apps host
// (web/console/app-view.js) needs ext-apps' host side (AppBridge, PostMessageTransport) as one browser module: it is
// bundled with what it imports (the MCP SDK's protocol, zod) into dist/ext-apps/app-bridge.js with its notices
// (APP_BRIDGE_BUNDLE, shared with the route that bundles it on demand in a checkout not built).
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { writeThirdPartyNotices } from './build-notices.mjs';
import { APP_BRIDGE_BUNDLE, EXCLUDED, SOURCES } from './build-sources.mjs';
import { basename, dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const modules = SOURCES.flatMap((dir) =>
  readdirSync(dir, { recursive: true })
    .map((file) => join(dir, file))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !EXCLUDED.includes(file)),
);
const common = {
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  bundle: true,
  outdir: '.dist-next',
  outbase: '.',
};
/** Every import stays an import; a relative one names the compiled file (`./x.ts` → `./x.js`), as tsc rewrites it. */
const importsAsWritten = {
  name: 'imports-as-written',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.ts$/, '.js'), external: true },
    );
  },
};
rmSync('.dist-next', { recursive: true, force: true });
await build({ ...common, entryPoints: modules, plugins: [importsAsWritten] });
// The two entries, bundled together with the packages they import (their shared code is one set of chunks).
const bundled = await build({
  ...common,
  entryPoints: ['src/cli.ts', 'tools/demo/main.ts'],
  allowOverwrite: true,
  splitting: true, // what an entry imports lazily (`serve`, `init`) stays a chunk of its own: `--version` loads none
  chunkNames: 'src/chunks/[name]-[hash]',
  // Loaded from node_modules: the native addon, and undici (its classes read through a dynamic import() of a bundled
  // copy are not constructors). What src/ loads with createRequire (redis, OpenTelemetry) esbuild cannot see: also
  // from node_modules, which is why the package keeps every dependency.
  external: ['uWebSockets.js', 'undici'],
  // The CommonJS packages' own require() of node's modules.
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  metafile: true,
  sourcemap: 'external', // for the benchmarks' CPU profiles (bench/lib/cpuprofile.ts); not in the package
});
writeThirdPartyNotices(bundled.metafile, '.dist-next/THIRD-PARTY-NOTICES.md');
/** The folder of installed package `pkg` (dompurify's exports do not list its package.json). */
function packageRoot(pkg) {
  let dir = dirname(require.resolve(pkg));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'))).name !== pkg)
    dir = dirname(dir);
  return dir;
}
/** Copies `files` (paths in package `pkg`) into .dist-next/<folder>/, each under its own base name. */
function vendor(folder, pkg, files) {
  const from = packageRoot(pkg);
  mkdirSync(join('.dist-next', folder));
  for (const file of files) copyFileSync(join(from, file), join('.dist-next', folder, basename(file)));
}
vendor('swagger-ui', 'swagger-ui-dist', [
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-bundle.js.LICENSE.txt',
  'LICENSE',
  'NOTICE',
]);
vendor('marked', 'marked', ['lib/marked.esm.js', 'LICENSE']);
vendor('dompurify', 'dompurify', ['dist/purify.es.mjs', 'LICENSE']);
const bridge = await build({ ...APP_BRIDGE_BUNDLE, outfile: '.dist-next/ext-apps/app-bridge.js', metafile: true });
writeThirdPartyNotices(bridge.metafile, '.dist-next/ext-apps/THIRD-PARTY-NOTICES.md');
/** Whether folders `a` and `b` hold the same files with the same bytes. */
function sameTree(a, b) {
  if (!existsSync(b)) return false;
  const list = (dir) =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length))
      .sort();
  const files = list(a);
  const other = list(b);
  return (
    files.length === other.length &&
    files.every((f, i) => f === other[i] && readFileSync(a + f).equals(readFileSync(b + f)))
  );
}

if (sameTree('.dist-next', 'dist')) {
  rmSync('.dist-next', { recursive: true, force: true });
  const now = new Date();
  utimesSync('dist/src/cli.js', now, now);
  process.exit(0);
}
rmSync('.dist-old', { recursive: true, force: true });
try {
  renameSync('dist', '.dist-old');
} catch (e) {
  if (e.code !== 'ENOENT') throw e;
}
renameSync('.dist-next', 'dist');
rmSync('.dist-old', { recursive: true, force: true });
