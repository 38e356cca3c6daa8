/**
 * llhttp's published test vectors (its repository's test/request/*.md and test/response/*.md), read from a copy
 * outside this repository: they are not ours to commit. Where: `LLHTTP_VECTORS` (a folder holding request/ and
 * response/, i.e. llhttp's test/), else ../shared/vendor/llhttp/test beside the repository when present.
 *
 * llhttp's format, read here: a `### heading` names a vector; `<!-- meta={...} -->` gives its JSON metadata (`type`:
 * request, response, request-lenient-…); a ```` ```http ```` block holds its input, a ```` ```log ```` block the
 * events llhttp reports. The input's escapes are llhttp's: lines end in CRLF, a trailing newline is dropped, a
 * backslash before a line end joins the lines, `\r` `\n` `\t` `\f` `\xHH` and octal `\NNN` stand for their bytes.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface Vector {
  /** The file, relative to the vectors' folder (`request/invalid.md`), and the vector's line there. */
  file: string;
  line: number;
  /** Its `##` heading, or `## section / ### heading`: unique in its file. */
  heading: string;
  meta: { type?: string; [key: string]: unknown };
  input: Buffer;
  /** llhttp's expected events, one a line. */
  log: string[];
}

/** The folder of llhttp's test vectors, or undefined when none is at hand. */
export function vectorsFolder(root: string): string | undefined {
  const candidates = [process.env.LLHTTP_VECTORS, resolve(root, '..', 'shared', 'vendor', 'llhttp', 'test')];
  return candidates.find((dir): dir is string => !!dir && existsSync(join(dir, 'request')));
}

/** llhttp's escapes in an input block, as its bytes. */
export function decodeInput(block: string): Buffer {
  const text = block
    .replace(/\n$/, '')
    .replace(/\\(\r\n|\r|\n)/g, '')
    .replace(/\r\n|\r|\n/g, '\r\n')
    .replace(/\\r/g, '\r')
    .replace(/\\n/g, '\n')
    .replace(/\\t/g, '\t')
    .replace(/\\f/g, '\f')
    .replace(/\\x([0-9a-fA-F]+)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\([0-7]{1,3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return Buffer.from(text, 'latin1');
}

/** The vectors of one markdown file. */
export function readVectors(folder: string, file: string): Vector[] {
  const lines = readFileSync(join(folder, file), 'utf8').split('\n');
  const vectors: Vector[] = [];
  let current: Omit<Vector, 'input' | 'log'> & { input?: Buffer; log?: string[] } = {
    file,
    line: 0,
    heading: '',
    meta: {},
  };
  let fence: { kind: string; body: string[] } | undefined;
  /** The `##` section a `###` heading is under: such a vector's heading is `section / heading`. */
  let section = '';
  lines.forEach((line, i) => {
    if (fence) {
      if (line !== '```') return void fence.body.push(line);
      const body = fence.body.join('\n');
      if (fence.kind === 'http') current.input = decodeInput(`${body}\n`);
      if (fence.kind === 'log') current.log = fence.body;
      fence = undefined;
      if (current.input && current.log) vectors.push({ ...current, input: current.input, log: current.log });
      return;
    }
    const heading = /^(#{2,}) (.*)$/.exec(line);
    if (heading?.[1] === '##') section = heading[2]!.trim();
    if (heading) {
      const name = heading[1] === '##' || !section ? heading[2]!.trim() : `${section} / ${heading[2]!.trim()}`;
      current = { file, line: i + 1, heading: name, meta: {} };
    }
    const meta = /^<!-- meta=(\{.*\}) -->$/.exec(line.trim());
    if (meta) current.meta = JSON.parse(meta[1]!) as Vector['meta'];
    const open = /^```(\w+)\s*$/.exec(line);
    if (open) fence = { kind: open[1]!, body: [] };
  });
  return vectors;
}

/** Every vector of `kind` (request or response) under `folder`. */
export function allVectors(folder: string, kind: 'request' | 'response'): Vector[] {
  return readdirSync(join(folder, kind))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .flatMap((name) => readVectors(folder, `${kind}/${name}`));
}
