/**
 * A reader of llhttp's published test vectors (the markdown files of its `test/` folder: `response/*.md`), for the
 * differential tests. The vectors are never committed here: they come from a local copy of llhttp's `test/` folder
 * (`LLHTTP_VECTORS`, else `../shared/vendor/llhttp/test` beside the checkout), and a test without them skips visibly.
 *
 * The format (llhttp's test/md-test.ts): headings name tests (`#`…`####`, or a line underlined with `===`/`---`);
 * `<!-- meta={...} -->` gives a test's `type` (`response`, `response-lenient-…`, …); the ```http block after it is
 * the input. The input is decoded as md-test.ts decodes it: the trailing newline dropped, `\` at a line's end joins
 * lines, every line end becomes CRLF, `\r` `\n` `\t` `\f` `\xNN` and octal escapes become their characters, and the
 * text is sent as UTF-8. Inline JavaScript (`${…}`) is never evaluated: such a vector is returned with `input`
 * undefined, for the test to report as skipped.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.ts';

export interface LlhttpVector {
  /** The file under the vectors' folder, e.g. `response/content-length.md`. */
  file: string;
  /** The nearest heading above the test. */
  heading: string;
  /** 1-based line of its ```http block. */
  line: number;
  /** Its meta (`type`, `noScan`, `pause`, …). */
  meta: { type?: string } & Record<string, unknown>;
  /** The bytes to send; undefined for a vector with inline JavaScript. */
  input: Buffer | undefined;
}

/** Where llhttp's `test/` folder is: LLHTTP_VECTORS, else ../shared/vendor/llhttp/test beside the checkout. */
export function llhttpVectorsDir(): string | undefined {
  const candidates = [process.env.LLHTTP_VECTORS, join(ROOT, '..', 'shared', 'vendor', 'llhttp', 'test')];
  return candidates.find((dir): dir is string => dir !== undefined && existsSync(join(dir, 'response')));
}

/** md-test.ts's decoding of an ```http block's text. */
export function decodeInput(raw: string): Buffer | undefined {
  if (/\$\{/.test(raw)) return undefined;
  let input = raw.replace(/\n$/, '');
  input = input.replace(/\\(\r\n|\r|\n)/g, '');
  input = input.replace(/\r\n|\r|\n/g, '\r\n');
  input = input.replace(/\\r/g, '\r').replace(/\\n/g, '\n').replace(/\\t/g, '\t').replace(/\\f/g, '\f');
  input = input.replace(/\\x([0-9a-fA-F]+)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  input = input.replace(/\\([0-7]{1,3})/g, (_, digits: string) => String.fromCharCode(parseInt(digits, 8)));
  return Buffer.from(input, 'utf8');
}

/** Every test of one markdown file. */
export function parseVectors(file: string, text: string): LlhttpVector[] {
  const lines = text.split('\n');
  const vectors: LlhttpVector[] = [];
  let heading = '';
  let meta: LlhttpVector['meta'] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const atx = /^#{1,6}\s+(.*)$/.exec(line);
    if (atx) heading = (atx[1] as string).trim();
    else if (/^(=+|-+)\s*$/.test(line) && i > 0 && (lines[i - 1] as string).trim() !== '')
      heading = (lines[i - 1] as string).trim();
    const comment = /^<!--\s*meta=(\{.*\})\s*-->\s*$/.exec(line);
    if (comment) meta = JSON.parse(comment[1] as string) as LlhttpVector['meta'];
    if (!line.startsWith('```http')) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !(lines[end] as string).startsWith('```')) end++;
    vectors.push({
      file,
      heading,
      line: start,
      meta: meta ?? {},
      input: decodeInput(`${lines.slice(start, end).join('\n')}\n`),
    });
    meta = undefined;
    i = end;
  }
  return vectors;
}

/** Every response vector (`response/*.md`) under `dir`, in file order. */
export function readResponseVectors(dir: string): LlhttpVector[] {
  return readdirSync(join(dir, 'response'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .flatMap((name) => parseVectors(`response/${name}`, readFileSync(join(dir, 'response', name), 'utf8')));
}
