// `npm run build:types` (after `npm run build`, on `npm pack`): the type declarations of `agentd-server/client`,
// dist/src/client/index.d.ts and the declarations of the server modules whose zod schemas its types are read from
// (src/client/routes.ts, feature-routes.ts), emitted by tsc (tsconfig.client.json) beside the compiled modules in
// dist/. Relative imports in them name the .js modules, as in the compiled code, so a consumer's TypeScript finds each .d.ts. A
// declaration tsc cannot name a type in (a server internal the client never reaches) is still written; the client's
// own files must emit cleanly. Its progress goes to stderr: stdout is left to what runs it (`npm pack --json`).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
let output = '';
try {
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.client.json'], { encoding: 'utf8', stdio: 'pipe' });
} catch (e) {
  output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
}
const clientErrors = output.split('\n').filter((line) => line.startsWith('src/client/'));
if (clientErrors.length > 0 || !existsSync('dist/src/client/index.d.ts')) {
  process.stderr.write(output);
  process.exit(1);
}
let files = 0;
for (const file of readdirSync('dist', { recursive: true })) {
  const path = join('dist', String(file));
  if (!path.endsWith('.d.ts') || !statSync(path).isFile()) continue;
  const text = readFileSync(path, 'utf8');
  const fixed = text.replace(/((?:from\s+|import\()['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1$2.js$3');
  if (fixed !== text) writeFileSync(path, fixed);
  files++;
}
process.stderr.write(`client types: ${files} declaration files in dist/\n`);
