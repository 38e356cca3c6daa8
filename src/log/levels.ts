/** The log levels agentd accepts (pino's), without loading pino: `--help` and argument parsing use them. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];
