/** The log levels agentd accepts (pino's), without loading pino: `--help` and argument parsing use them. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

/** How log records are written: `pretty` lines for a person (pino-pretty), or `json` lines for machines. */
export const LOG_FORMATS = ['pretty', 'json'] as const;

export type LogFormat = (typeof LOG_FORMATS)[number];
