/**
 * Model requests through a forward proxy (issue 58, item 4): a real proxy on loopback (test/support/forward-proxy.ts)
 * that counts what passes through it. A turn reaches the simulator through `HTTP_PROXY` (absolute-form) or
 * `llm.proxy` (with credentials), `NO_PROXY` bypasses the environment's proxy, and an https endpoint is reached
 * through a CONNECT tunnel with TLS inside it. Nothing leaves 127.0.0.0/8: the proxy refuses any other target.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttp1Pool, ProxyRefusal } from '../../src/llm/http1-client/index.ts';
import { failureOf } from '../support/failure.ts';
import { startForwardProxy, type ForwardProxy } from '../support/forward-proxy.ts';
import { api, useSimulatorAndFolder } from '../support/messaging.ts';

const env = useSimulatorAndFolder('agentd-llm-proxy-');
let proxy: ForwardProxy;
let guarded: ForwardProxy;
beforeAll(async () => {
  [proxy, guarded] = await Promise.all([startForwardProxy(), startForwardProxy({ auth: 'agent:s3cret-pass' })]);
});
afterAll(async () => {
  await proxy.close();
  await guarded.close();
});

/** One turn on a service whose environment is `vars`; the model requests the proxy forwarded during it. */
async function turnWith(vars: NodeJS.ProcessEnv, llm: Record<string, unknown> = {}) {
  const app = await env.apps.start({ llm }, { modelUrl: env.sim.url, deps: { env: vars } });
  const before = [proxy.forwarded.length, guarded.forwarded.length];
  const reply = await api(app.url, 'POST', '/api/message-sync', { sessionId: 'p', message: 'through the proxy' });
  await env.apps.stop(app);
  return { reply, viaProxy: proxy.forwarded.slice(before[0]), viaGuarded: guarded.forwarded.slice(before[1]) };
}

describe('model requests through a forward proxy', () => {
  it('sends a turn through HTTP_PROXY as absolute-form requests, and straight to the model when NO_PROXY names it', async () => {
    const proxied = await turnWith({ HTTP_PROXY: proxy.url });
    expect(proxied.reply.status, proxied.reply.text).toBe(200);
    expect(proxied.reply.body.response).toBe('You said: through the proxy');
    expect(proxied.viaProxy).toEqual([`POST ${env.sim.url}/chat/completions`]);

    for (const noProxy of ['127.0.0.1', '*', 'localhost, 127.0.0.1']) {
      const direct = await turnWith({ http_proxy: proxy.url, NO_PROXY: noProxy });
      expect(direct.reply.status, noProxy).toBe(200);
      expect(direct.viaProxy, noProxy).toEqual([]);
    }
  });

  it('lets llm.proxy win over the environment, its credentials sent as Proxy-Authorization; false turns proxies off', async () => {
    const own = await turnWith({ HTTP_PROXY: proxy.url }, { proxy: guarded.url });
    expect(own.reply.status, own.reply.text).toBe(200);
    expect(own.viaGuarded).toHaveLength(1);
    expect(own.viaProxy).toEqual([]);
    const none = await turnWith({ HTTP_PROXY: proxy.url, NO_PROXY: '' }, { proxy: false });
    expect(none.reply.status).toBe(200);
    expect(none.viaProxy).toEqual([]);
  });

  const hasOpenssl = (() => {
    try {
      execFileSync('openssl', ['version']);
      return true;
    } catch {
      console.warn('openssl not found: the CONNECT case of test/int/llm-proxy.test.ts is skipped');
      return false;
    }
  })();

  it.runIf(hasOpenssl)(
    'tunnels an https endpoint through CONNECT, and names a proxy that refuses the tunnel',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'agentd-proxy-tls-'));
      try {
        execFileSync(
          'openssl',
          [
            ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
            ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1'],
            ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'],
          ],
          { stdio: 'ignore' },
        );
        const cert = readFileSync(join(dir, 'cert.pem'));
        const tls = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
          req.resume();
          req.on('end', () => res.end(`secure ${req.url} ${req.headers['proxy-authorization'] ?? 'no proxy header'}`));
        });
        await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
        const port = (tls.address() as AddressInfo).port;
        const url = `https://localhost:${port}/v1/chat`;
        const signal = new AbortController().signal;
        const tunnelled = createHttp1Pool({ tls: { ca: cert }, proxy: new URL(guarded.url) });
        try {
          for (let i = 0; i < 2; i++) {
            const answer = await tunnelled.request(url, {}, Buffer.from('{}'), signal);
            expect(await answer.body.text()).toBe('secure /v1/chat no proxy header'); // the credentials stay with the proxy
          }
          expect(guarded.tunnels).toEqual([`localhost:${port}`]); // one tunnel, kept alive for the second request
          const strict = createHttp1Pool({ tls: { ca: cert }, proxy: new URL(guarded.url.replace('s3cret', 'wrong')) });
          const denied = await failureOf(strict.request(url, {}, Buffer.from('{}'), signal));
          expect(denied).toBeInstanceOf(ProxyRefusal);
          expect(denied).toMatchObject({ status: 407 });
          expect((denied as Error).message).not.toContain('wrong');
          strict.close();
        } finally {
          tunnelled.close();
          tls.closeAllConnections();
          await new Promise<void>((resolve) => tls.close(() => resolve()));
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
