#!/usr/bin/env node
// The `agentd` command: runs the compiled service (dist/, built by `npm run build`, which `npm pack`
// runs through `prepack` and a checkout's `npm ci` through `dependencies`; the published package
// has no install script). `agentd demo` runs the shipped offline demo.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
if (!existsSync(dist)) {
  process.stderr.write(
    `agentd: ${dist.pathname} is missing: run \`npm run build\` in ${new URL('..', import.meta.url).pathname}\n`,
  );
  process.exit(1);
}
await import(
  process.argv[2] === 'demo' && process.argv.length === 3 ? '../dist/tools/demo/main.js' : '../dist/src/cli.js'
);
