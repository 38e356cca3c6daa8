/**
 * Whether a script is a package's declared entry point: a `bin` of the package that holds it. The spawn
 * policy lets a shared service's interpreters run such scripts (allowlist.ts), and reads a script
 * that is the bin of a program it knows (`npm`, `npx`, `tsx`, …) as that program (policy.ts).
 *
 * Contracts:
 * - `declaredBins(path)` follows every link of `path`, then reads the nearest `package.json` above the file
 *   that names a package (has a string `name`; a nameless one, such as a `dist/package.json` holding only
 *   `type`, is passed over). It returns the names under which that package's `bin` declares the file: a
 *   string `bin` is named after the package (without its scope), an object maps names to paths; each path is
 *   resolved against the package's folder with links followed and compared with the file's real path.
 * - `[]` when the package declares no such bin, or no package holds the file; undefined when `path` is not a
 *   file. Unreadable or malformed manifests count as declaring nothing.
 * - npm's `directories.bin` (a folder of bins) is not read: a script declared only that way is not a bin here.
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

/** The names under which the package holding `path` declares it as a `bin` (see the contract). */
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
