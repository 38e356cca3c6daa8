/**
 * One REST call: auth header, JSON or text body, the answer parsed, a refusal as AgentdError. An idempotent call
 * (GET, PUT, DELETE, or one the caller marks so: a message with its own `turnId`) refused with 429 or 503, or that
 * got no answer, is tried again after the server's `Retry-After` (else a doubling wait), at most `retries` times;
 * any other call is never repeated. Until the client first reached the server (an answer, or a WebSocket that
 * opened), no answer is not retried: a client pointed where nothing listens fails at once, naming the URL it tried.
 */
import { AgentdError, errorOfAnswer, retryAfterOf } from './errors.ts';
import type { ClientOptions } from './options.ts';
import type { HttpMethod } from './routes.ts';

export interface CallOptions {
  signal?: AbortSignal;
  /** Extra headers. */
  headers?: Record<string, string>;
}

export interface Request {
  method: HttpMethod;
  /** Path and query, from the base URL. */
  path: string;
  body?: { json: unknown } | { text: string; type: string };
  /** The answer as text rather than JSON. */
  text?: boolean;
  /** Safe to send again (see above); default: by method. */
  idempotent?: boolean;
}

const IDEMPOTENT: ReadonlySet<HttpMethod> = new Set(['GET', 'PUT', 'DELETE']);
const RETRIED = new Set([429, 503]);

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });

export interface Transport {
  readonly baseUrl: string;
  call<T>(request: Request, options?: CallOptions): Promise<T>;
  /** The credential for this request or connection, if any. */
  credential(): Promise<string | undefined>;
  /** Whether the server ever answered this client (a REST answer, a WebSocket opened). */
  readonly reached: boolean;
  /** Says the server answered (a WebSocket opened). */
  markReached(): void;
}

/** Why a request got no answer: the system's code (`ECONNREFUSED`) when it gives one. */
function reasonOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  return String(cause?.code ?? cause?.message ?? err);
}

/** No answer from `baseUrl`: reached before (so worth trying again), or never. */
export function noAnswer(baseUrl: string, reached: boolean, err: unknown): AgentdError {
  const reason = reasonOf(err);
  return new AgentdError(
    0,
    'NETWORK_ERROR',
    reached ? `No answer from ${baseUrl}: ${reason}` : `Could not reach agentd at ${baseUrl} (${reason})`,
    { url: baseUrl, reason },
  );
}

export function createTransport(options: ClientOptions): Transport {
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
  const retries = options.retries ?? 2;
  const maxWait = options.maxRetryDelayMs ?? 30_000;
  const credential = async () => options.apiKey ?? (options.token ? await options.token() : undefined);

  async function once(request: Request, options: CallOptions): Promise<{ res: Response; text: string }> {
    const key = await credential();
    const headers: Record<string, string> = { ...options.headers };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (request.body && 'json' in request.body) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.body.json);
    } else if (request.body) {
      headers['content-type'] = request.body.type;
      body = request.body.text;
    }
    const res = await doFetch(`${transport.baseUrl}${request.path}`, {
      method: request.method,
      headers,
      ...(body !== undefined && { body }),
      ...(options.signal && { signal: options.signal }),
    });
    return { res, text: await res.text() };
  }

  let reached = false;
  const transport: Transport = {
    baseUrl: options.baseUrl,
    credential,
    get reached() {
      return reached;
    },
    markReached: () => void (reached = true),
    async call<T>(request: Request, callOptions: CallOptions = {}): Promise<T> {
      const idempotent = request.idempotent ?? IDEMPOTENT.has(request.method);
      for (let attempt = 0; ; attempt++) {
        let answer: { res: Response; text: string };
        try {
          answer = await once(request, callOptions);
        } catch (err) {
          if (callOptions.signal?.aborted) throw err;
          const failure = noAnswer(transport.baseUrl, reached, err);
          if (!reached || !idempotent || attempt >= retries) throw failure;
          await sleep(Math.min(maxWait, 250 * 2 ** attempt), callOptions.signal);
          continue;
        }
        const { res, text } = answer;
        reached = true;
        if (res.ok) return (request.text ? text : text === '' ? undefined : JSON.parse(text)) as T;
        const wait = retryAfterOf(res.headers.get('retry-after'));
        const error = errorOfAnswer(res.status, text, wait);
        const delay = wait === undefined ? 250 * 2 ** attempt : wait * 1000;
        if (!idempotent || !RETRIED.has(res.status) || attempt >= retries || delay > maxWait) throw error;
        await sleep(delay, callOptions.signal);
      }
    },
  };
  return transport;
}
