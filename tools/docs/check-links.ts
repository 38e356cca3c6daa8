/**
 * Checks the links of the Markdown docs, offline: every relative link names a file or folder of the
 * repository, and every `#anchor` names a heading (or an HTML `id`) of the Markdown file it points into.
 *
 *   npm run docs:links                 # README.md, docs/**\/*.md, SECURITY.md, bench/README.md, tools/simulator/README.md, examples/ag-ui-copilotkit/README.md
 *   npx tsx tools/docs/check-links.ts FILE...
 *
 * Rules (each problem is printed as `file:line: link: reason`, and the exit code is 1):
 * - A link with a scheme (`https:`, `mailto:`, …) is refused: the docs link only inside the repository,
 *   so they read the same offline, in a clone and in the installed package, and no web page moves under them.
 * - A relative link resolves against its file's folder and must stay inside the repository and exist.
 * - An anchor must be a heading's GitHub slug (lower case, punctuation dropped, spaces to `-`, a repeated
 *   heading gets `-1`, `-2`, …) or an `id`/`name` attribute, in the target when it is Markdown; an anchor
 *   into any other kind of file is refused (line anchors of source files move with every edit).
 * - Links inside fenced code blocks and inline code are not links.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LinkProblem {
  /** The Markdown file, relative to the root. */
  file: string;
  line: number;
  link: string;
  reason: string;
}

/** The Markdown without fenced code blocks and inline code spans, each replaced by spaces (offsets and lines kept). */
export function withoutCode(markdown: string): string {
  const blank = (text: string) => text.replace(/[^\n]/g, ' ');
  const fenced = markdown.replace(/^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^\1?\2[`~]*[ \t]*$|(?![\s\S]))/gm, blank);
  return fenced.replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)|``/g, blank);
}

/** GitHub's slug of a heading's text: inline markup dropped, lower case, punctuation removed, spaces to dashes. */
export function slug(heading: string): string {
  // Code spans keep their text as written (`<name>` included); markup outside them is dropped.
  const text = heading
    .split(/(`+[^`]*`+)/)
    .map(
      (part, i) =>
        i % 2 === 1
          ? part.replace(/`/g, '')
          : part
              .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
              .replace(/<[^>]+>/g, '') // HTML tags
              .replace(/(^|[^\p{L}\p{N}])_+([^_]+?)_+(?=[^\p{L}\p{N}]|$)/gu, '$1$2'), // _emphasis_ (snake_case keeps its underscores)
    )
    .join('');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings' slugs (repeats numbered as GitHub does) and HTML `id`/`name` attributes. */
export function anchorsOf(markdown: string): Set<string> {
  const code = withoutCode(markdown);
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const add = (base: string) => {
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  };
  const lines = code.split('\n');
  const sources = markdown.split('\n');
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    const source = sources[i] ?? '';
    if (atx) return add(slug(source.replace(/^ {0,3}#{1,6}[ \t]+/, '').replace(/[ \t]+#+[ \t]*$/, '')));
    const next = lines[i + 1];
    if (
      next !== undefined &&
      /^ {0,3}(=+|-+)[ \t]*$/.test(next) &&
      line.trim() !== '' &&
      !/^ {0,3}([-*+]|\d+[.)])\s|^\s*\|/.test(line)
    )
      add(slug(line));
  });
  for (const m of code.matchAll(/<[a-z][^>]*\s(?:id|name)=["']([^"']+)["']/gi)) anchors.add(m[1]!);
  return anchors;
}

export interface Link {
  target: string;
  /** 1-based line of the link in its file. */
  line: number;
}

/** The link targets of a Markdown file: inline links and images `[text](target "title")`, and reference definitions `[ref]: target`. */
export function linksOf(markdown: string): Link[] {
  const code = withoutCode(markdown);
  const lineAt = (offset: number) => code.slice(0, offset).split('\n').length;
  const links: Link[] = [];
  for (const m of code.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)) {
    links.push({ target: m[1]!.replace(/^<|>$/g, ''), line: lineAt(m.index) });
  }
  for (const m of code.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm))
    links.push({ target: m[1]!.replace(/^<|>$/g, ''), line: lineAt(m.index) });
  return links;
}

/** Reads a file's text (a seam for tests). */
export type ReadText = (path: string) => string;

/** The problems of the links of `files` (paths relative to `root`). */
export function checkLinks(
  root: string,
  files: string[],
  read: ReadText = (p) => readFileSync(p, 'utf8'),
): LinkProblem[] {
  const problems: LinkProblem[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (path: string) => {
    let anchors = anchorCache.get(path);
    if (!anchors) anchorCache.set(path, (anchors = anchorsOf(read(path))));
    return anchors;
  };
  for (const file of files) {
    const source = resolve(root, file);
    for (const { target, line } of linksOf(read(source))) {
      const report = (reason: string) => problems.push({ file, line, link: target, reason });
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        report('links outside the repository (the docs link only to files and headings in it)');
        continue;
      }
      const hash = target.indexOf('#');
      const pathPart = hash === -1 ? target : target.slice(0, hash);
      let anchor = hash === -1 ? undefined : target.slice(hash + 1);
      let path: string;
      try {
        path = decodeURIComponent(pathPart.split('?')[0]!);
        if (anchor !== undefined) anchor = decodeURIComponent(anchor);
      } catch {
        report('is not a valid URL');
        continue;
      }
      const resolved = path === '' ? source : resolve(dirname(source), path);
      const inside = relative(resolve(root), resolved);
      if (inside.startsWith('..')) {
        report('points outside the repository');
        continue;
      }
      if (!existsSync(resolved)) {
        report(`names no file (${inside.split(sep).join('/') || '.'})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (anchor === '') {
        report('has an empty anchor');
        continue;
      }
      if (statSync(resolved).isDirectory() || extname(resolved).toLowerCase() !== '.md') {
        report('has an anchor into a file that is not Markdown');
        continue;
      }
      if (!anchorsIn(resolved).has(anchor))
        report(`names no heading #${anchor} in ${relative(resolve(root), resolved).split(sep).join('/')}`);
    }
  }
  return problems;
}

/** The Markdown files CI checks: the README, every page under docs/, SECURITY.md and the benchmark, simulator and example READMEs. */
export function docFiles(root: string): string[] {
  const under = (dir: string): string[] =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? under(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
        )
      : [];
  return [
    'README.md',
    ...under('docs').sort(),
    'SECURITY.md',
    'bench/README.md',
    'tools/simulator/README.md',
    'examples/ag-ui-copilotkit/README.md',
  ].filter((f) => existsSync(join(root, f)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const args = process.argv.slice(2);
  const files = args.length > 0 ? args.map((a) => relative(root, resolve(a))) : docFiles(root);
  const problems = checkLinks(root, files);
  for (const p of problems) console.error(`${p.file}:${p.line}: ${p.link}: ${p.reason}`);
  if (problems.length > 0) {
    console.error(`${problems.length} broken link${problems.length === 1 ? '' : 's'} in ${files.length} files`);
    process.exit(1);
  }
  console.log(`links of ${files.length} files are good`);
}
