/**
 * The client's options, checked when it is made: an unknown option or a value of the wrong type is an AgentdError
 * `CLIENT_INPUT` at once, before any request.
 */
import { inputError } from './errors.ts';

/** What the client uses of a WebSocket (browsers' and the `ws` package's). */
export interface SocketLike {
  addEventListener(type: 'open' | 'error', listener: () => void, options?: { once?: boolean }): void;
  addEventListener(type: 'message', listener: (e: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (e: { code: number }) => void): void;
  send(text: string): void;
  close(code?: number): void;
}
/** A WebSocket constructor as browsers and the `ws` package have it. */
export type WebSocketLike = new (url: string) => SocketLike;

export interface ReconnectOptions {
  /** First wait after a dropped connection (ms, default 250); doubled per attempt up to `maxDelayMs`. */
  initialDelayMs?: number;
  /** Longest wait between attempts (ms, default 5000). */
  maxDelayMs?: number;
  /** Attempts in a row before a stream fails (default 10); a connection that delivered a frame resets the count. */
  maxAttempts?: number;
}

export interface ClientOptions {
  /** Where agentd listens, e.g. `http://127.0.0.1:3000`; the WebSocket URL is made from it. */
  baseUrl: string;
  /** A key of `server.auth` (sent as `Authorization: Bearer`, and as `?token=` on the WebSocket). */
  apiKey?: string;
  /** A token per request instead (a JWT that expires): called before each request and each connection. */
  token?: () => string | Promise<string>;
  /** Retries of an idempotent call refused with 429 or 503, or that got no answer (default 2). */
  retries?: number;
  /** The longest `Retry-After` honoured (ms, default 30000); a longer one fails at once. */
  maxRetryDelayMs?: number;
  reconnect?: ReconnectOptions;
  /** A `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** A WebSocket constructor (default: the global one, else the `ws` package). */
  WebSocket?: WebSocketLike;
}

const KINDS: Record<keyof ClientOptions, string> = {
  baseUrl: 'string',
  apiKey: 'string',
  token: 'function',
  retries: 'number',
  maxRetryDelayMs: 'number',
  reconnect: 'object',
  fetch: 'function',
  WebSocket: 'function',
};
const RECONNECT_KEYS = ['initialDelayMs', 'maxDelayMs', 'maxAttempts'];

/** Refuses `given` keys outside `known` (what a misspelt option would silently drop). */
export function checkKeys(what: string, given: object, known: readonly string[]): void {
  for (const key of Object.keys(given))
    if (!known.includes(key))
      throw inputError(`Unknown ${what} "${key}" (known: ${known.join(', ')})`, { option: key });
}

export function checkOptions(options: ClientOptions): Required<Pick<ClientOptions, 'baseUrl'>> & ClientOptions {
  if (typeof options !== 'object' || options === null) throw inputError('AgentdClient needs an options object');
  checkKeys('option', options, Object.keys(KINDS));
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const kind = KINDS[key as keyof ClientOptions];
    if (typeof value !== kind) throw inputError(`Option "${key}" must be a ${kind}`, { option: key });
  }
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw inputError(`baseUrl "${String(options.baseUrl)}" is not a URL`, { option: 'baseUrl' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw inputError('baseUrl must be an http: or https: URL', { option: 'baseUrl' });
  if (options.reconnect) checkKeys('reconnect option', options.reconnect, RECONNECT_KEYS);
  if (options.apiKey !== undefined && options.token !== undefined)
    throw inputError('Give apiKey or token, not both', { option: 'token' });
  return { ...options, baseUrl: url.href.replace(/\/+$/, '') };
}
