// The type of /console/purify.js: DOMPurify's browser ESM build, served by src/http/routes/page-routes.ts.
export { default } from 'dompurify';
