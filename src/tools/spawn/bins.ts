/**
 * `declaredBins(path)`: the names under which the package holding `path` (links followed; the nearest
 * `package.json` above it with a string `name`) declares it as a `bin` — a string `bin` is named after the package
 * without its scope. `[]` when none (or no package, or an unreadable manifest); undefined when `path` is not a file.
 * npm's `directories.bin` is not read. The spawn policy reads such a script as the program it is a bin of.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const realFile = (path: string): string | undefined => {
  try {
    const real = realpathSync(path);
    return statSync(real).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
};

const readManifest = (file: string): Record<string, unknown> | undefined => {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

/** The manifest of the package holding `file` (a real path), and its folder. */
function holdingPackage(file: string): { dir: string; manifest: Record<string, unknown> } | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = readManifest(join(dir, 'package.json'));
    if (manifest && typeof manifest.name === 'string') return { dir, manifest };
    if (dirname(dir) === dir) return undefined;
  }
}

export function declaredBins(path: string): string[] | undefined {
  const file = realFile(path);
  if (file === undefined) return undefined;
  const pkg = holdingPackage(file);
  if (!pkg) return [];
  const { bin, name } = pkg.manifest;
  const entries: [string, unknown][] =
    typeof bin === 'string'
      ? [[String(name).replace(/^@[^/]*\//, ''), bin]]
      : bin !== null && typeof bin === 'object'
        ? Object.entries(bin)
        : [];
  return entries
    .filter(([, target]) => typeof target === 'string' && realFile(resolve(pkg.dir, target)) === file)
    .map(([binName]) => binName);
}
