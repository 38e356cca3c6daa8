// @ts-check
/**
 * The graph of relative imports between files, for `agentd/layers` (no file cycles) and for the test
 * that proves the repository has none.
 *
 * Contracts:
 * - An edge is every relative module specifier of a file: `import`, `import type`, `export … from`,
 *   dynamic `import()`, type-level `import('…')`, `require()`. They are found by TypeScript's
 *   pre-processor (`ts.preProcessFile`), a scanner that skips comments and strings: no type checking.
 * - A specifier resolves to the file it names; a `.js` specifier falls back to its `.ts` source, and a
 *   specifier without an extension to `<it>.ts` or `<it>/index.ts`. Only code files (`.ts`, `.mts`,
 *   `.cts`, `.tsx`, `.js`, `.mjs`, `.cjs`) have edges; JSON and other assets are leaves.
 * - A file's edges are read from disk once and cached by path, size and mtime, so one lint run reads
 *   each file once and a long-running ESLint (an editor) sees edits.
 * - Searches walk only the files a caller's `within` accepts (the files of a component), so they are
 *   bounded by the size of the code base and never enter node_modules.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import ts from 'typescript';

const CODE = new Set(['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs']);

/** @typedef {{ specifier: string, target: string, start: number, end: number }} Edge */

/** The file a relative specifier names (absolute), or undefined when there is none. @param {string} from absolute file @param {string} specifier */
function resolveRelative(from, specifier) {
  const base = resolve(dirname(from), specifier);
  const candidates = [base];
  if (base.endsWith('.js')) candidates.push(`${base.slice(0, -3)}.ts`);
  if (!extname(base)) candidates.push(`${base}.ts`, resolve(base, 'index.ts'));
  return candidates.find((file) => statSync(file, { throwIfNoEntry: false })?.isFile());
}

/** @typedef {{ specifier: string, start: number, end: number }} Specifier */

/**
 * Every module specifier of a source text with its position (the specifier's text, quotes excluded):
 * imports, `export … from`, `import()`, type-level `import('…')`, `import x = require()`, and in
 * JavaScript files plain `require()` calls too; comments and strings skipped.
 * @param {string} file absolute (its extension says whether it is JavaScript) @param {string} text
 * @returns {Specifier[]}
 */
function specifiersOf(file, text) {
  const javascript = /\.[cm]?js$/.test(file);
  // `pos` is the opening quote's offset and `end` is `pos` plus the specifier's length.
  const found = ts
    .preProcessFile(text, true, javascript)
    .importedFiles.map(({ fileName, pos, end }) => ({ specifier: fileName, start: pos + 1, end: end + 1 }));
  return [...found, ...namespaceReExports(text)].sort((a, b) => a.start - b.start);
}

/**
 * The specifiers of `export * as x from '…'` and `export type * as x from '…'`, which TypeScript's pre-processor
 * leaves out, found by its scanner (comments and strings skipped).
 * @param {string} text @returns {Specifier[]}
 */
function namespaceReExports(text) {
  const K = ts.SyntaxKind;
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  /** @type {Specifier[]} */
  const found = [];
  /** The kinds of the tokens since the last `export`, `type` left out. */
  let after = /** @type {ts.SyntaxKind[] | undefined} */ (undefined);
  for (let kind = scanner.scan(); kind !== K.EndOfFileToken; kind = scanner.scan()) {
    if (kind === K.ExportKeyword) after = [];
    else if (
      after &&
      kind === K.StringLiteral &&
      after.join() === [K.AsteriskToken, K.AsKeyword, K.Identifier, K.FromKeyword].join()
    ) {
      const start = scanner.getTokenStart() + 1;
      found.push({ specifier: scanner.getTokenValue(), start, end: start + scanner.getTokenValue().length });
      after = undefined;
    } else if (after && !(kind === K.TypeKeyword && after.length === 0)) {
      after.push(kind === K.StringLiteral ? K.Unknown : kind);
      if (after.length > 4) after = undefined;
    }
  }
  return found;
}

/** The relative imports among `specifiers` that name an existing file. @param {string} file absolute @param {Specifier[]} specifiers */
function edgesAmong(file, specifiers) {
  if (!CODE.has(extname(file))) return [];
  /** @type {Edge[]} */
  const edges = [];
  for (const { specifier, start, end } of specifiers) {
    if (!specifier.startsWith('./') && !specifier.startsWith('../')) continue;
    const target = resolveRelative(file, specifier);
    if (target) edges.push({ specifier, target, start, end });
  }
  return edges;
}

/** @typedef {{ specifiers: Specifier[], edges: Edge[] }} Imports */

/** @type {Map<string, { size: number, mtimeMs: number, text: string, imports: Imports }>} */
const cache = new Map();

/**
 * The imports of `file`: of `text` when given (the text being linted), else of the file on disk.
 * Results are cached by path, size and mtime, and a linted text equal to the file on disk fills the
 * same cache, so a lint run scans each file once.
 * @param {string} file absolute @param {string} [text]
 * @returns {Imports}
 */
export function importsOf(file, text) {
  const stat = statSync(file, { throwIfNoEntry: false });
  const hit = stat && cache.get(file);
  if (
    stat &&
    hit &&
    hit.size === stat.size &&
    hit.mtimeMs === stat.mtimeMs &&
    (text === undefined || text === hit.text)
  )
    return hit.imports;
  const onDisk = stat?.isFile() ? readFileSync(file, 'utf8') : undefined;
  const source = text ?? onDisk;
  if (source === undefined) return { specifiers: [], edges: [] };
  const specifiers = specifiersOf(file, source);
  const imports = { specifiers, edges: edgesAmong(file, specifiers) };
  if (stat && source === onDisk) cache.set(file, { size: stat.size, mtimeMs: stat.mtimeMs, text: source, imports });
  return imports;
}

/** The relative imports of a file on disk. @param {string} file absolute */
const edgesOnDisk = (file) => importsOf(file).edges;

/**
 * For each edge of `file` (given as `edges`, e.g. of the text being linted), the shortest chain of
 * imports on disk that leads from its target back to `file`: the cycle that edge closes.
 * @param {string} file absolute
 * @param {Edge[]} edges
 * @param {(file: string) => boolean} within which files the search may walk through
 * @returns {{ edge: Edge, cycle: string[] }[]} each cycle as absolute files, `file` first and last
 */
export function cyclesThrough(file, edges, within) {
  /** Files known not to lead back to `file`. */
  const deadEnds = new Set();
  const found = [];
  for (const edge of edges) {
    if (edge.target === file) {
      found.push({ edge, cycle: [file, file] });
      continue;
    }
    if (!within(edge.target) || deadEnds.has(edge.target)) continue;
    /** @type {Map<string, string | undefined>} each reached file → the file that imported it */
    const parent = new Map([[edge.target, undefined]]);
    let queue = [edge.target];
    let last;
    search: while (queue.length > 0) {
      const next = [];
      for (const current of queue) {
        for (const { target } of edgesOnDisk(current)) {
          if (target === file) {
            last = current;
            break search;
          }
          if (parent.has(target) || deadEnds.has(target) || !within(target)) continue;
          parent.set(target, current);
          next.push(target);
        }
      }
      queue = next;
    }
    if (last === undefined) {
      for (const reached of parent.keys()) deadEnds.add(reached);
      continue;
    }
    const chain = [];
    for (let at = /** @type {string | undefined} */ (last); at !== undefined; at = parent.get(at)) chain.unshift(at);
    found.push({ edge, cycle: [file, ...chain, file] });
  }
  return found;
}

/**
 * Every file of `files` that lies on a cycle of imports on disk, with one cycle through it
 * (searches walk only through `files`). An empty list means the files import each other acyclically.
 * @param {string[]} files absolute
 * @returns {string[][]}
 */
export function findFileCycles(files) {
  const set = new Set(files);
  const cycles = [];
  for (const file of files) {
    const [first] = cyclesThrough(file, edgesOnDisk(file), (f) => set.has(f));
    if (first) cycles.push(first.cycle);
  }
  return cycles;
}
