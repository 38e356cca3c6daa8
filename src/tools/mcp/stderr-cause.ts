/**
 * The cause of a stdio server's death, read from its stderr: its first and last lines are kept (bounded), and the
 * cause is the lines that say what went wrong, without stack frames, Node's version banner, npm's log pointer or
 * carets (a launcher's last line is rarely the cause).
 */

/** Lines kept from the start and from the end of stderr, and the longest line kept. */
export const STDERR_HEAD_LINES = 40;
export const STDERR_TAIL_LINES = 10;
const MAX_LINE_CHARS = 300;
/** Lines in a cause, and its longest length. */
const CAUSE_LINES = 3;
const MAX_CAUSE_CHARS = 600;

const NOISE = [
  /^Node\.js v\d/, // Node's banner after an uncaught error
  /^\s*at\s/, // stack frames
  /^\s*\^+\s*$/, // the caret under the throwing line
  /^node:internal\//, // where Node threw
  /^\s*throw\b/, // the throwing source line
  /^\s*[{}[\]],?\s*$/, // the error object's braces
  /^\s+\w+: .*,?$/, // the error object's fields (code: 'MODULE_NOT_FOUND', requireStack: [])
  /A complete log of this run can be found/,
  /^npm (error|ERR!)\s*(404)?\s*$/, // an empty npm error line
  /^npm (error|ERR!) (code|errno|syscall|path|dest) /, // npm's error fields: the message follows
  /^npm (error|ERR!) 404\s+(Note that you can also install|tarball, folder, http url)/,
  /^npm (error|ERR!) 404\s+You should bug the author/,
  /^npm (error|ERR!) 404\s+It was specified as a dependency/,
  /^npm (warn|WARN)\b/,
];

const ERRORISH =
  /Error\b|\berror\b|\bERR_|\bE[A-Z0-9]{3,}\b|\b(Cannot|cannot|not found|Not Found|No such|denied|failed|refused|missing|Unknown|Invalid|invalid)\b|is not in this registry|could not be found/;

/** Keeps stderr bounded while it arrives: its first STDERR_HEAD_LINES and last STDERR_TAIL_LINES lines. */
export class StderrLines {
  private readonly head: string[] = [];
  private readonly tail: string[] = [];

  push(line: string): void {
    const kept = line.slice(0, MAX_LINE_CHARS);
    if (this.head.length < STDERR_HEAD_LINES) return void this.head.push(kept);
    this.tail.push(kept);
    if (this.tail.length > STDERR_TAIL_LINES) this.tail.shift();
  }

  lines(): string[] {
    return [...this.head, ...this.tail];
  }
}

/** The lines of `stderr` that say why the process failed, joined with ` | `; undefined when none says anything. */
export function stderrCause(stderr: string[]): string | undefined {
  const meaningful = stderr.map((l) => l.trim()).filter((l) => l && !NOISE.some((re) => re.test(l)));
  if (meaningful.length === 0) return undefined;
  const errorish = meaningful.filter((l) => ERRORISH.test(l));
  const picked = [...new Set(errorish.length > 0 ? errorish : meaningful.slice(-CAUSE_LINES))].slice(0, CAUSE_LINES);
  const cause = picked.join(' | ');
  return cause.length > MAX_CAUSE_CHARS ? `${cause.slice(0, MAX_CAUSE_CHARS - 1)}…` : cause;
}
