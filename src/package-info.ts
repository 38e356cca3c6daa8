/** Where the running package lives (from src/ in a checkout or dist/src/ when installed) and its version. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'agents', 'agent.schema.json'))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`agentd's package root (package.json beside agents/) is not above ${from}`);
  }
}

export const PACKAGE_ROOT: string = findRoot(import.meta.dirname);

/** A path inside the package, e.g. `packagePath('agents', 'demo.yml')`. */
export const packagePath = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);

/** Whether this runs from a source checkout: only a checkout has tools/demo/main.ts. */
export const FROM_CHECKOUT: boolean = existsSync(packagePath('tools', 'demo', 'main.ts'));

export const VERSION: string = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string })
  .version;
