/**
 * One attempt of a delivery: the URL policy of remote tool servers checked on the resolved addresses (the request
 * goes to those only, or through the forward proxy src/proxy.ts picks), a signed POST with the webhook's timeout.
 * A 2xx delivers; 408, 429, 5xx, a timeout or a network error is retried; any other answer, or a URL the policy
 * refuses, fails for good. The answer's body is not read.
 */
import { AppError } from '../errors/index.ts';
import { proxyFor } from '../proxy.ts';
import { pinnedFetch, resolveAllowed, type UrlPolicy } from '../tools/spawn/url-policy.ts';
import type { StoredWebhook } from './outbox-store.ts';
import { signedHeaders } from './sign.ts';

export type AttemptOutcome =
  { delivered: true; statusCode: number } | { delivered: false; retry: boolean; statusCode?: number; error: string };

const RETRIED = (status: number) => status === 408 || status === 429 || status >= 500;

export async function attemptDelivery(
  hook: StoredWebhook,
  delivery: { id: string; body: string },
  at: number,
  policy: UrlPolicy,
): Promise<AttemptOutcome> {
  let addresses;
  try {
    addresses = await resolveAllowed(hook.url, policy);
  } catch (err) {
    const reason = err instanceof AppError ? err.message : String(err);
    return { delivered: false, retry: false, error: `refused by the URL policy: ${reason}` };
  }
  const { fetch, close } = pinnedFetch(addresses, proxyFor(hook.url, hook.proxy));
  try {
    const res = await fetch(hook.url, {
      method: 'POST',
      headers: { ...signedHeaders(hook.secret, delivery.id, at, delivery.body), 'user-agent': 'agentd-webhooks' },
      body: delivery.body,
      signal: AbortSignal.timeout(hook.timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { delivered: true, statusCode: res.status };
    return { delivered: false, retry: RETRIED(res.status), statusCode: res.status, error: `HTTP ${res.status}` };
  } catch (err) {
    const name = (err as Error).name;
    const error = name === 'TimeoutError' ? `no answer within ${hook.timeoutMs} ms` : networkError(err);
    return { delivered: false, retry: true, error };
  } finally {
    await close().catch(() => undefined);
  }
}

const networkError = (err: unknown): string => {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return `network error: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
};
