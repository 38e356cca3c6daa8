/**
 * Behind a load balancer: with `server.trustedProxies`, requests from a trusted proxy are counted for
 * the client X-Forwarded-For names (per-IP limits); without it, the header is the client's word and
 * changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';
import { forwardedClient } from '../../src/http/ip.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

const POINTS = 2;
/** A cheap route that counts against the limit (health probes never do). */
const listSessions = (svc: RunningApp, forwardedFor?: string) =>
  fetch(`${svc.url}/api/sessions`, { headers: forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {} }).then(
    (r) => r.status,
  );

describe('trusted proxies', () => {
  let proxied: RunningApp;
  let direct: RunningApp;
  beforeAll(async () => {
    const limits = { rest: { points: POINTS } };
    proxied = await startApp({ server: { limits, trustedProxies: ['127.0.0.1'] } });
    direct = await startApp({ server: { limits } });
  });
  afterAll(async () => {
    await proxied.stop();
    await direct.stop();
  });

  it('counts each forwarded client in its own window when the peer is a trusted proxy', async () => {
    expect([
      await listSessions(proxied, '203.0.113.7'),
      await listSessions(proxied, '203.0.113.7'),
      await listSessions(proxied, '203.0.113.7'),
    ]).toEqual([200, 200, 429]);
    // Another client behind the same proxy has its own window; a spoofed left-most entry does not help.
    expect(await listSessions(proxied, '198.51.100.1, 203.0.113.8')).toBe(200);
    expect(await listSessions(proxied, '203.0.113.99, 203.0.113.7')).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    expect([
      await listSessions(direct, '203.0.113.1'),
      await listSessions(direct, '203.0.113.2'),
      await listSessions(direct, '203.0.113.3'),
    ]).toEqual([200, 200, 429]);
  });

  it('takes the right-most address that is not a trusted proxy, and nothing that is not an address', () => {
    const trusted = new Set(['10.0.0.1', '10.0.0.2']);
    expect(forwardedClient('203.0.113.5, 10.0.0.2', trusted)).toBe('203.0.113.5');
    expect(forwardedClient('1.1.1.1, 203.0.113.5', trusted)).toBe('203.0.113.5');
    expect(forwardedClient('::FFFF:203.0.113.5', trusted)).toBe('203.0.113.5');
    expect(forwardedClient('2001:DB8::1', trusted)).toBe('2001:db8::1');
    expect(forwardedClient('not-an-ip', trusted)).toBeUndefined();
    expect(forwardedClient('10.0.0.1, 10.0.0.2', trusted)).toBeUndefined();
    expect(forwardedClient('', trusted)).toBeUndefined();
    expect(() => parseConfig({ llm: { model: 'm' }, server: { trustedProxies: ['my-balancer'] } })).toThrow(
      /trustedProxies.*must be an IP address/s,
    );
  });
});
