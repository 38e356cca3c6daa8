/** A `$NAME` or `${NAME}` reference; `$$` stands for a literal `$`. */
const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

export class MissingEnvError extends Error {
  constructor(
    readonly variable: string,
    readonly path: string,
  ) {
    super(`environment variable ${variable} is not set (referenced at ${path})`);
  }
}

/**
 * Replaces environment references in every string of a parsed YAML tree.
 * Expansion happens after parsing, so a value can never change the document's structure.
 * Throws MissingEnvError naming the first unset variable.
 */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (match, braced?: string, bare?: string) => {
      if (match === '$$') return '$';
      const name = (braced ?? bare)!;
      const found = env[name];
      if (found === undefined) throw new MissingEnvError(name, path || '(root)');
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, path ? `${path}.${k}` : k)]),
    );
  }
  return value;
}
