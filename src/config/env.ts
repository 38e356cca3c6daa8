/** A `$NAME` or `${NAME}` reference; `$$` stands for a literal `$`. */
const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** An unset variable and every place of the config that refers to it (dotted paths, in document order). */
export interface MissingVariable {
  variable: string;
  paths: string[];
  /** The first place, as keys and indexes. */
  at: (string | number)[];
}

/** Every unset variable the config refers to, each once, in the order they first appear. */
export class MissingEnvError extends Error {
  constructor(readonly missing: MissingVariable[]) {
    super(missing.map(describeMissing).join('; '));
  }
}

export const describeMissing = ({ variable, paths }: MissingVariable): string =>
  `environment variable ${variable} is not set (referenced at ${paths.join(', ')})`;

/**
 * Replaces environment references in every string of a parsed YAML tree (after parsing, so a value never
 * changes the document's structure). Throws MissingEnvError naming every unset variable, not only the first.
 */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv): unknown {
  const missing = new Map<string, { paths: string[]; at: (string | number)[] }>();
  const expand = (v: unknown, path: string, at: (string | number)[]): unknown => {
    if (typeof v === 'string') {
      return v.replace(REFERENCE, (match, braced?: string, bare?: string) => {
        if (match === '$$') return '$';
        const name = (braced ?? bare)!;
        const found = env[name];
        if (found !== undefined) return found;
        const entry = missing.get(name) ?? { paths: [], at };
        if (!entry.paths.includes(path || '(root)')) entry.paths.push(path || '(root)');
        missing.set(name, entry);
        return match;
      });
    }
    if (Array.isArray(v)) return v.map((item, i) => expand(item, `${path}[${i}]`, [...at, i]));
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, item]) => [k, expand(item, path ? `${path}.${k}` : k, [...at, k])]),
      );
    }
    return v;
  };
  const expanded = expand(value, '', []);
  if (missing.size > 0) throw new MissingEnvError([...missing].map(([variable, entry]) => ({ variable, ...entry })));
  return expanded;
}
