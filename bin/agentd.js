#!/usr/bin/env node
// The `agentd` command: runs the compiled service (dist/, built by `npm run build`, which `npm pack`
// runs through `prepack` and a checkout's `npm ci` through `dependencies`; the published package
// has no install script). `agentd demo` runs the shipped offline demo.
// On Node 22.1+ the compiled modules are kept in Node's compile cache (NODE_COMPILE_CACHE, else
// <tmpdir>/node-compile-cache): later starts skip compiling them (~20 % faster to the first health
// answer). NODE_DISABLE_COMPILE_CACHE=1 turns it off; Node 20 has no such cache.
import { existsSync } from 'node:fs';
import module from 'node:module';

module.enableCompileCache?.();

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
