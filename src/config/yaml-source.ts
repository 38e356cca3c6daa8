/**
 * An agent file's YAML text: its syntax errors in plain words at the line of the mistake, and where a key path
 * is written (line and column, 1-based) so that schema problems can point at it.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import type { KeyPath } from './key-docs.ts';

export interface Position {
  line: number;
  col: number;
}

export interface YamlSource {
  /** The document as plain data (undefined when it has errors). */
  data: unknown;
  /** The first syntax error (one mistake often yields several), in words, where it is; undefined when none. */
  error: { at: Position; message: string } | undefined;
  /**
   * Where `path` is written: the key of its last segment (or, with `key`, that key inside the object at
   * `path`); the nearest written ancestor when the path is not all written; undefined for the root.
   */
  positionOf(path: KeyPath, key?: string): Position | undefined;
}

const firstSentence = (message: string) => message.split(/ at line \d+, column \d+/)[0]!;

/** The line (1-based) where a double- or single-quoted value that never closes starts. */
function unclosedQuoteLine(text: string): number | undefined {
  const lines = text.split('\n');
  const open = lines.findIndex((line) => /:\s+["']/.test(line) && !/:\s+(["']).*\1\s*(#.*)?$/.test(line));
  return open < 0 ? undefined : open + 1;
}

/** A syntax error in words a person can act on, at the line of the mistake (the library's own as the fallback). */
function explain(error: YAMLError, all: YAMLError[], text: string): { at: Position; message: string } {
  const [start] = error.linePos ?? [{ line: 1, col: 1 }];
  const at = { line: start.line, col: start.col };
  const lineText = text.split('\n')[start.line - 1]?.trim() ?? '';
  switch (error.code) {
    case 'BLOCK_AS_IMPLICIT_KEY':
    case 'MULTILINE_IMPLICIT_KEY': {
      // A key indented deeper than the one above it reads as that one's value: the mistake is on the next line.
      const spill = all.find((e) => e.code === 'MULTILINE_IMPLICIT_KEY')?.linePos?.[1];
      if (spill && spill.line > start.line) {
        const line = spill.line;
        const col = (/^ */.exec(text.split('\n')[line - 1] ?? '')?.[0].length ?? 0) + 1;
        return {
          at: { line, col },
          message: `this line is indented more than the key on line ${start.line}; indent it as much as that key, or give it a parent key ending in ":"`,
        };
      }
      return { at, message: 'a value that holds ": " must be quoted, e.g. key: "a: b"' };
    }
    case 'MISSING_CHAR':
      if (/quote/.test(error.message)) {
        const line = unclosedQuoteLine(text) ?? start.line;
        return { at: { line, col: 1 }, message: 'this quoted value is never closed: end it with the same quote' };
      }
      if (/Implicit map keys need to be followed by map values/.test(error.message))
        return { at, message: `"${lineText}" needs ":" after its key, as in key: value` };
      break;
    case 'TAB_AS_INDENT':
      return { at, message: 'YAML is indented with spaces, not tabs' };
    case 'DUPLICATE_KEY':
      return { at, message: `${lineText.split(':')[0]} is written twice in the same object: keep one` };
    case 'BAD_INDENT':
      if (/Flow sequence/.test(error.message))
        return {
          at: { line: Math.max(1, start.line - 1), col: 1 },
          message: 'a list started with [ is not closed with ]',
        };
      break;
  }
  return { at, message: firstSentence(error.message) };
}

export function readYaml(text: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter, uniqueKeys: true });
  const at = (offset: number | undefined): Position | undefined =>
    offset === undefined ? undefined : lineCounter.linePos(offset);
  return {
    data: doc.errors.length > 0 ? undefined : doc.toJS(),
    error: doc.errors[0] && explain(doc.errors[0], doc.errors, text),
    positionOf(path, key) {
      let node: unknown = doc.contents;
      let found: Position | undefined;
      for (const segment of key === undefined ? path : [...path, key]) {
        if (isMap(node)) {
          const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
          if (!pair) return found;
          found = at((pair.key as { range?: [number, number, number] }).range?.[0]) ?? found;
          node = pair.value;
        } else if (isSeq(node) && typeof segment === 'number') {
          const item = node.items[segment] as { range?: [number, number, number] } | undefined;
          if (!item) return found;
          found = at(item.range?.[0]) ?? found;
          node = item;
        } else return found;
      }
      return found;
    },
  };
}
