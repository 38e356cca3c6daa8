import { pino, type Logger, type LevelWithSilent, type DestinationStream } from 'pino';

export type { Logger };

export { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './levels.ts';
export { logDestination } from './destination.ts';

/** Root logger: JSON lines to stdout (or `stream`); secret-bearing keys are censored, and every line passes `redact` when given. */
export function createLogger(
  level: LevelWithSilent = 'info',
  stream?: DestinationStream,
  redact?: (line: string) => string,
): Logger {
  const options = {
    level,
    base: { service: 'agentd' },
    ...(redact && { hooks: { streamWrite: redact } }),
    redact: {
      paths: [
        'apiKey',
        '*.apiKey',
        '*.*.apiKey',
        'authorization',
        '*.authorization',
        'headers.authorization',
        'env',
        '*.env',
      ],
      censor: '[REDACTED]',
    },
  };
  return stream ? pino(options, stream) : pino(options);
}
