/**
 * The client's REST calls without a server: 429 and 503 are retried after `Retry-After` for idempotent calls only,
 * a refusal is one AgentdError from the error envelope, a token callback is asked for each request, and the
 * client's files import the server's modules for types only (it runs in browsers, with no server code).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentdClient, AgentdError } from '../../src/client/index.ts';

const envelope = (status: number, code: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ success: false, error: { code, message: `no: ${code}`, details: { why: 1 } } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
const ok = (body: unknown) => new Response(JSON.stringify(body), { status: 200 });

function scripted(...answers: Response[]) {
  const seen: { url: string; init: RequestInit | undefined }[] = [];
  const fetch = (url: string, init?: RequestInit) => {
    seen.push({ url, init });
    const next = answers.shift();
    return next ? Promise.resolve(next) : Promise.reject(new Error('no answer scripted'));
  };
  return { fetch: fetch as unknown as typeof globalThis.fetch, seen };
}

describe('client REST calls', () => {
  it('retries an idempotent call refused with 429 after its Retry-After, and answers the success', async () => {
    const { fetch, seen } = scripted(
      envelope(429, 'RATE_LIMIT_EXCEEDED', { 'retry-after': '0.05' }),
      ok({ webhooks: [] }),
    );
    const client = new AgentdClient({ baseUrl: 'http://agentd.test', fetch });
    const started = Date.now();
    expect(await client.api.listWebhooks()).toEqual({ webhooks: [] });
    expect(seen).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('never repeats a call that is not idempotent; the refusal is one AgentdError', async () => {
    const { fetch, seen } = scripted(envelope(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }), ok({}));
    const client = new AgentdClient({ baseUrl: 'http://agentd.test', fetch });
    const err = await client.api.messageSync({ body: { message: 'hi' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentdError);
    expect(err).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'no: SERVICE_UNAVAILABLE',
      details: { why: 1 },
      retryAfter: 0,
    });
    expect(seen).toHaveLength(1);
  });

  it('gives up after `retries`, and fails at once on a Retry-After past maxRetryDelayMs', async () => {
    const limited = () => envelope(429, 'RATE_LIMIT_EXCEEDED', { 'retry-after': '0' });
    const a = scripted(limited(), limited());
    await expect(
      new AgentdClient({ baseUrl: 'http://a.test', fetch: a.fetch, retries: 1 }).api.health(),
    ).rejects.toMatchObject({ status: 429 });
    expect(a.seen).toHaveLength(2);
    const b = scripted(envelope(429, 'RATE_LIMIT_EXCEEDED', { 'retry-after': '120' }));
    await expect(new AgentdClient({ baseUrl: 'http://b.test', fetch: b.fetch }).api.health()).rejects.toMatchObject({
      retryAfter: 120,
    });
    expect(b.seen).toHaveLength(1);
  });

  it('asks the token callback for each request; builds paths and queries from the arguments', async () => {
    const { fetch, seen } = scripted(ok({}), ok({}));
    let n = 0;
    const client = new AgentdClient({ baseUrl: 'http://agentd.test/', fetch, token: () => `tok-${++n}` });
    await client.api.history({ sessionId: 'a b', query: { since: 3 } });
    await client.api.deliveries({ webhookId: 'w', query: { limit: 5 } });
    expect(seen.map((s) => s.url)).toEqual([
      'http://agentd.test/api/sessions/a%20b/history?since=3',
      'http://agentd.test/api/webhooks/w/deliveries?limit=5',
    ]);
    expect(seen.map((s) => (s.init?.headers as Record<string, string>).authorization)).toEqual([
      'Bearer tok-1',
      'Bearer tok-2',
    ]);
  });

  it('reads a refusal without an envelope as HTTP_<status>', async () => {
    const { fetch } = scripted(new Response('<html>bad gateway</html>', { status: 502 }));
    await expect(new AgentdClient({ baseUrl: 'http://x.test', fetch }).api.health()).rejects.toMatchObject({
      status: 502,
      code: 'HTTP_502',
    });
  });

  it("imports the server's modules for their types only", () => {
    const dir = 'src/client';
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), 'utf8');
      const values = [...text.matchAll(/^import\s+(?!type\b)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]);
      expect(
        values.filter((from) => !from?.startsWith('./')),
        file,
      ).toEqual([]);
    }
  });
});
