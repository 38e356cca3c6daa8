/**
 * Where the running package lives and what version it is. One root holds package.json, web/,
 * agents/ and machines/layouts.json, whether the code runs from src/ (a checkout, through tsx) or
 * from dist/src/ (the compiled package, wherever npm installed it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'agents', 'agent.schema.json'))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`agentd's package root (package.json beside agents/) is not above ${from}`);
  }
}

/** The package's root folder (no trailing slash). */
export const PACKAGE_ROOT: string = findRoot(import.meta.dirname);

/** A path inside the package, e.g. `packagePath('agents', 'demo.yml')`. */
export const packagePath = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);

/**
 * Whether this runs from a source checkout rather than an installed package: a checkout has the
 * demo's source (tools/demo/main.ts, what its `npm run demo` runs), which the package never ships.
 */
export const FROM_CHECKOUT: boolean = existsSync(packagePath('tools', 'demo', 'main.ts'));

/** The service version reported by health and `--version` (from package.json). */
export const VERSION: string = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string })
  .version;
