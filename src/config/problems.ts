/**
 * What is wrong with an agent file, one line a problem, for a person: where (file:line:col when the YAML text is
 * known), the key's path, what is wrong, the near miss it probably meant, and the docs section of that key.
 */
import type { z } from 'zod';
import { describeMissing, type MissingVariable } from './env.ts';
import { createKeyDocs, type KeyDocs, type KeyPath } from './key-docs.ts';
import { nearMiss } from './near-miss.ts';
import type { Position, YamlSource } from './yaml-source.ts';

export interface Problem {
  path: KeyPath;
  message: string;
  /** What was probably meant (a known key or value). */
  suggestion?: string | undefined;
  /** `docs/configuration.md#…`. */
  docs?: string;
}

/** `a.b[0].c`, or `(root)`. */
export const dotted = (path: KeyPath): string =>
  path.reduce<string>(
    (out, s) => (typeof s === 'number' ? `${out}[${s}]` : out === '' ? String(s) : `${out}.${String(s)}`),
    '',
  ) || '(root)';

function valueAt(doc: unknown, path: KeyPath): unknown {
  let value = doc;
  for (const s of path) value = value !== null && typeof value === 'object' ? (value as never)[s] : undefined;
  return value;
}

/** A value that is not one of `options`. */
function notOneOf(docs: KeyDocs, path: KeyPath, value: unknown, options: readonly unknown[]): Problem {
  const names = options.map(String);
  return {
    path,
    message: `${JSON.stringify(value)} is not one of ${names.join(', ')}`,
    ...(typeof value === 'string' && { suggestion: nearMiss(value, names) }),
    docs: docs.docsLink(path.slice(0, -1)),
  };
}

function problemsOf(docs: KeyDocs, issue: z.core.$ZodIssue, doc: unknown): Problem[] {
  const path = issue.path as KeyPath;
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = docs.keysAt(path);
      return issue.keys.map((key) => ({
        path: [...path, key],
        message: `unknown key "${key}"`,
        suggestion: nearMiss(key, known),
        docs: docs.docsLink(path),
      }));
    }
    case 'invalid_value':
      return [notOneOf(docs, path, valueAt(doc, path), issue.values)];
    case 'invalid_union':
      if ('options' in issue && Array.isArray(issue.options))
        return [notOneOf(docs, path, valueAt(doc, path), issue.options)];
      break;
    case 'invalid_type':
      if (valueAt(doc, path) === undefined)
        return [{ path, message: `missing (${issue.expected} required)`, docs: docs.docsLink(path.slice(0, -1)) }];
      break;
  }
  return [{ path, message: issue.message, docs: docs.docsLink(path.slice(0, -1)) }];
}

/** The schema's issues as problems; a required key reported missing beside its own near miss is said once. */
export function schemaProblems(issues: z.core.$ZodIssue[], doc: unknown): Problem[] {
  const docs = createKeyDocs();
  const problems = issues.flatMap((issue) => problemsOf(docs, issue, doc));
  const meant = new Set(
    problems.filter((p) => p.suggestion).map((p) => dotted([...p.path.slice(0, -1), p.suggestion!])),
  );
  return problems.filter((p) => !(p.message.startsWith('missing') && meant.has(dotted(p.path))));
}

export const envProblem = (m: MissingVariable): Problem => ({ path: m.at, message: describeMissing(m) });

/** One line: `file:line:col: path: message; did you mean "x"? (see docs…)`; without `source`, from `path:` on. */
export function formatProblem(p: Problem, file: string, source?: YamlSource): string {
  const unknownKey = p.message.startsWith('unknown key');
  const at: Position | undefined = unknownKey
    ? source?.positionOf(p.path.slice(0, -1), String(p.path.at(-1)))
    : source?.positionOf(p.path);
  return [
    at ? `${file}:${at.line}:${at.col}: ` : '',
    `${dotted(p.path)}: ${p.message}`,
    p.suggestion ? `; did you mean "${p.suggestion}"?` : '',
    p.docs ? ` (see ${p.docs})` : '',
  ].join('');
}
