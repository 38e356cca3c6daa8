import { pino, type DestinationStream } from 'pino';
import type { LogFormat } from './levels.ts';

/**
 * Where the root logger writes, on file descriptor `fd` (1: stdout, 2: stderr): readable lines (pino-pretty,
 * imported only then) with `pretty`, or when no format is asked and `fd` is a terminal; JSON lines otherwise.
 * Undefined: pino's own stdout (JSON). Redaction happens before either (createLogger's `streamWrite`).
 */
export async function logDestination(format: LogFormat | undefined, fd: 1 | 2): Promise<DestinationStream | undefined> {
  const tty = (fd === 1 ? process.stdout : process.stderr).isTTY;
  if ((format ?? (tty ? 'pretty' : 'json')) === 'json') return fd === 2 ? pino.destination(2) : undefined;
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    destination: fd,
    colorize: tty,
    sync: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
}
