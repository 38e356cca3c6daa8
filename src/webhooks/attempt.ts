/**
 * One attempt of a delivery: the URL policy of remote tool servers checked on the resolved addresses (the request
 * goes to those only, or through the forward proxy src/egress/proxy.ts picks), the request sent with the target's timeout.
 * A webhook's request is a signed POST (`attemptDelivery`); an A2A push notification's is built by src/a2a-face/push
 * (`attemptRequest` sends either). A 2xx delivers; 408, 429, 5xx, a timeout or a network error is retried; any other
 * answer, or a URL the policy refuses, fails for good. The answer's body is not read.
 * A client per target (its origin, the addresses it resolved to, its proxy) is kept between attempts, so deliveries
 * to one receiver reuse its connections (keep-alive); the addresses are resolved and checked at every attempt, and a
 * change makes a new client. Past KEPT_CLIENTS the least recently used idle client is closed: never one with an
 * attempt in flight (many receivers at once, some that never answer, must not cut a healthy one's attempt).
 * `signal` (the dispatcher's stop) ends an attempt early. `close()` ends every kept client.
 */
import { AppError } from '../errors/index.ts';
import { proxyFor, type ProxySetting } from '../egress/proxy.ts';
import { pinnedRequest, resolveAllowed, type UrlPolicy } from '../egress/url-policy.ts';
import type { StoredWebhook } from './outbox-store.ts';
import { signedHeaders } from './sign.ts';

export type AttemptOutcome =
  { delivered: true; statusCode: number } | { delivered: false; retry: boolean; statusCode?: number; error: string };

/** An attempt's HTTP request. */
export interface AttemptRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

const RETRIED = (status: number) => status === 408 || status === 429 || status >= 500;

/** Clients kept at most (the least recently used one is closed first). */
const KEPT_CLIENTS = 16;

type Kept = ReturnType<typeof pinnedRequest> & { inFlight: number };

export function createAttempts() {
  const clients = new Map<string, Kept>();
  /** Closes the least recently used idle clients past KEPT_CLIENTS. */
  const trim = () => {
    for (const [old, kept] of clients) {
      if (clients.size <= KEPT_CLIENTS) break;
      if (kept.inFlight > 0) continue;
      clients.delete(old);
      void kept.close().catch(() => undefined);
    }
  };
  const clientFor = (url: string, addresses: Awaited<ReturnType<typeof resolveAllowed>>, proxy: URL | undefined) => {
    const key = `${new URL(url).origin}|${addresses.map((a) => a.address).join(',')}|${proxy?.href ?? ''}`;
    let client = clients.get(key);
    if (client) clients.delete(key);
    else client = { ...pinnedRequest(addresses, proxy), inFlight: 0 };
    clients.set(key, client);
    trim();
    return client;
  };

  async function attemptRequest(
    request: AttemptRequest,
    timeoutMs: number,
    policy: UrlPolicy,
    proxy: ProxySetting,
    signal?: AbortSignal,
  ): Promise<AttemptOutcome> {
    let addresses;
    try {
      addresses = await resolveAllowed(request.url, policy);
    } catch (err) {
      const reason = err instanceof AppError ? err.message : String(err);
      return { delivered: false, retry: false, error: `refused by the URL policy: ${reason}` };
    }
    const client = clientFor(request.url, addresses, proxyFor(request.url, proxy));
    const timeout = AbortSignal.timeout(timeoutMs);
    client.inFlight++;
    try {
      const res = await client.request({ ...request, signal: signal ? AbortSignal.any([timeout, signal]) : timeout });
      if (res.status >= 200 && res.status < 300) return { delivered: true, statusCode: res.status };
      return { delivered: false, retry: RETRIED(res.status), statusCode: res.status, error: `HTTP ${res.status}` };
    } catch (err) {
      const error = timeout.aborted ? `no answer within ${timeoutMs} ms` : networkError(err);
      return { delivered: false, retry: true, error };
    } finally {
      client.inFlight--;
      trim();
    }
  }

  return {
    attemptRequest,
    /** A webhook's attempt: its signed POST. */
    attemptDelivery(
      hook: StoredWebhook,
      delivery: { id: string; body: string },
      at: number,
      policy: UrlPolicy,
      signal?: AbortSignal,
    ): Promise<AttemptOutcome> {
      const headers = {
        ...signedHeaders(hook.secret, delivery.id, at, delivery.body),
        'user-agent': 'agentd-webhooks',
      };
      return attemptRequest(
        { url: hook.url, method: 'POST', headers, body: delivery.body },
        hook.timeoutMs,
        policy,
        hook.proxy,
        signal,
      );
    },
    /** Ends every kept client's connections. */
    async close(): Promise<void> {
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((c) => c.close().catch(() => undefined)));
    },
  };
}
export type Attempts = ReturnType<typeof createAttempts>;

const networkError = (err: unknown): string => {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return `network error: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
};
