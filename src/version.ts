import pkg from '../package.json' with { type: 'json' };

/** The service version reported by health and `--version` (from package.json). */
export const VERSION: string = pkg.version;
