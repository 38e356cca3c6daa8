// What `npm run build` (tools/build.mjs) compiles into dist/, and the files that say how: the test setup
// (test/support/built-dist.ts) rebuilds when any of them is newer than dist/.
/** The folders compiled. */
export const SOURCES = ['src', 'machines', 'tools/demo', 'tools/simulator'];
/** A development script under them, not part of the package. */
export const EXCLUDED = ['src/config/write-schema.ts'];
/** The build's own files and config. */
export const BUILD_FILES = ['tsconfig.json', 'tools/build.mjs', 'tools/build-notices.mjs', 'tools/build-sources.mjs'];
