// The type of /console/marked.js: marked's browser ESM build, served by src/http/routes/page-routes.ts.
export { Marked } from 'marked';
export type { Tokens } from 'marked';
