/**
 * llhttp's published test vectors (its repository's test/request/*.md and test/response/*.md, tag 9.4.2, MIT): a
 * copy is committed under test/fixtures/llhttp/ with llhttp's LICENSE, so a clone (and CI) always has them. Where:
 * `AGENTD_LLHTTP_VECTORS` (a folder holding request/ and response/, i.e. llhttp's test/: another llhttp release),
 * else test/fixtures/llhttp, else ../shared/vendor/llhttp/test beside the checkout. A folder named by the variable
 * that holds no request/ is an error, not a fallback. Without vectors a test skips with a notice, but fails where
 * they are required: on CI (`CI=true`) or with `AGENTD_REQUIRE_LLHTTP=1`. One reader serves the server's and the
 * model client's differential tests.
 *
 * llhttp's format (its test/md-test.ts): a `##` or `###` heading names a vector (`section / heading` under a `##`
 * section: unique in its file); `<!-- meta={...} -->` gives its metadata (`type`: request, response,
 * request-lenient-…); a ```` ```http ```` block holds its input, an optional ```` ```log ```` block the events llhttp
 * reports. The input is decoded as md-test.ts decodes it: the trailing newline dropped, a backslash before a line end
 * joins the lines, every line end becomes CRLF, `\r` `\n` `\t` `\f` `\xHH` and octal `\NNN` stand for their bytes
 * (one byte each: latin1, as the vectors' own note on `\xff` says). Inline JavaScript (`${…}`) is never evaluated:
 * such a vector has no `input`, for the test to report as skipped (9.4.2 has none).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from './paths.ts';

export interface LlhttpVector {
  /** The file, relative to the vectors' folder (`request/invalid.md`), and the line of the vector's heading. */
  file: string;
  line: number;
  /** Its `##` heading, or `## section / ### heading`: unique in its file. */
  heading: string;
  meta: { type?: string; [key: string]: unknown };
  /** The bytes to send; undefined for a vector with inline JavaScript. */
  input: Buffer | undefined;
  /** llhttp's expected events, one a line (empty when the vector gives none). */
  log: string[];
}

/** Where the vectors were looked for and found, or why not, and whether their absence fails the test. */
export interface VectorsLookup {
  dir: string | undefined;
  /** Set when `dir` is undefined: what was tried, for the notice or the failure. */
  missing: string | undefined;
  required: boolean;
}

/** The folder of llhttp's test vectors (see the head of this file for the order), and whether it is required. */
export function findLlhttpVectors(env: NodeJS.ProcessEnv = process.env, root: string = ROOT): VectorsLookup {
  const required = env.CI === 'true' || env.AGENTD_REQUIRE_LLHTTP === '1';
  const holds = (dir: string) => existsSync(join(dir, 'request')) && existsSync(join(dir, 'response'));
  const named = env.AGENTD_LLHTTP_VECTORS;
  if (named) {
    const dir = resolve(named);
    return holds(dir)
      ? { dir, missing: undefined, required }
      : { dir: undefined, missing: `AGENTD_LLHTTP_VECTORS=${named} holds no request/ and response/`, required: true };
  }
  const candidates = [join(root, 'test', 'fixtures', 'llhttp'), join(root, '..', 'shared', 'vendor', 'llhttp', 'test')];
  const dir = candidates.find(holds);
  return dir
    ? { dir, missing: undefined, required }
    : { dir, missing: `llhttp's vectors are in none of ${candidates.join(', ')}`, required };
}

/** The http blocks a vectors file holds: what readVectors must return one vector for, each. */
export function countHttpBlocks(folder: string, kind: 'request' | 'response'): number {
  return readdirSync(join(folder, kind))
    .filter((name) => name.endsWith('.md'))
    .reduce(
      (sum, name) => sum + (readFileSync(join(folder, kind, name), 'utf8').match(/^```http\s*$/gm) ?? []).length,
      0,
    );
}

/** md-test.ts's decoding of an ```http block's text. */
export function decodeInput(block: string): Buffer | undefined {
  if (block.includes('${')) return undefined;
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

type Reading = Omit<LlhttpVector, 'input'> & { input?: Buffer | undefined; read: boolean };

/** The vectors of one markdown file (`file`: relative to `folder`). */
export function readVectors(folder: string, file: string): LlhttpVector[] {
  const vectors: LlhttpVector[] = [];
  let current: Reading | undefined;
  let fence: { kind: string; body: string[] } | undefined;
  /** The `##` section a `###` heading is under. */
  let section = '';
  const done = () => {
    if (!current?.read) return;
    const { read: _, ...vector } = current;
    vectors.push({ ...vector, input: vector.input });
  };
  readFileSync(join(folder, file), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (fence) {
        if (line !== '```') return void fence.body.push(line);
        if (current && fence.kind === 'http')
          Object.assign(current, { input: decodeInput(`${fence.body.join('\n')}\n`), read: true });
        if (current && fence.kind === 'log') current.log = fence.body;
        fence = undefined;
        return;
      }
      const heading = /^(#{2,}) (.*)$/.exec(line);
      if (heading) {
        done();
        const text = heading[2]!.trim();
        if (heading[1] === '##') section = text;
        current = {
          file,
          line: i + 1,
          heading: heading[1] === '##' || !section ? text : `${section} / ${text}`,
          meta: {},
          log: [],
          read: false,
        };
      }
      const meta = /^<!--\s*meta=(\{.*\})\s*-->$/.exec(line.trim());
      if (meta && current) current.meta = JSON.parse(meta[1]!) as LlhttpVector['meta'];
      const open = /^```(\w+)\s*$/.exec(line);
      if (open) fence = { kind: open[1]!, body: [] };
    });
  done();
  return vectors;
}

/** Every vector of `kind` (request or response) under `folder`, in file order. */
export function allVectors(folder: string, kind: 'request' | 'response'): LlhttpVector[] {
  return readdirSync(join(folder, kind))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .flatMap((name) => readVectors(folder, `${kind}/${name}`));
}
