/**
 * Principals and scopes through the real server: named keys (`chat`, `inspect`, `admin`), a JWT
 * verified against a JWKS file on REST, WebSocket and /mcp, and a JWKS URL refetched for an unknown
 * `kid` after the set is rotated. Logs name the principal, never the key.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { rawRequest, rawUpgrade } from '../support/raw-http.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs } from '../support/ws-client.ts';

const CHAT = 'chat-key-0123456789abcdef';
const INSPECT = 'inspect-key-0123456789abcdef';
const ADMIN = 'admin-key-0123456789abcdef';
const ISSUER = 'https://idp.test';
const AUDIENCE = 'agentd';
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const json = { 'Content-Type': 'application/json' };
const mcpHeaders = { ...json, Accept: 'application/json, text/event-stream' };
const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const connect = JSON.stringify({ name: 'other', config: { type: 'stdio', command: 'node', args: ['nothing.js'] } });

/** A signing key pair with its public JWK (kid set), and a signer of tokens with it. */
async function signer(kid: string) {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const sign = (sub: string, scope: string | string[]) =>
    new SignJWT({ scope })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setSubject(sub)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
  return { jwk, sign };
}

describe('keys with scopes, and a JWT from a JWKS file', () => {
  let svc: RunningApp;
  let sim: Simulator;
  let token: (sub: string, scope: string | string[]) => Promise<string>;
  const logs: string[] = [];

  beforeAll(async () => {
    sim = await startSimulator();
    const k1 = await signer('k1');
    token = k1.sign;
    const dir = await mkdtemp(join(tmpdir(), 'agentd-principals-'));
    const jwksFile = join(dir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [k1.jwk] }));
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logs.push(chunk.toString()), done()) });
    svc = await startApp(
      {
        server: {
          inspect: true,
          limits: { rest: { points: 10_000 } },
          auth: {
            keys: [
              { name: 'alice', key: CHAT, scopes: ['chat'] },
              { name: 'grafana', key: INSPECT, scopes: ['inspect'] },
              { name: 'ops', key: ADMIN, scopes: ['admin'] },
            ],
            jwt: { issuer: ISSUER, audience: AUDIENCE, jwksFile },
          },
        },
      },
      { modelUrl: sim.url, deps: { log: createLogger('debug', sink) } },
    );
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  /** A GET as fetch sees it: status, headers and the body as text (parsed when JSON). */
  const get = async (path: string, key?: string) => {
    const res = await fetch(`${svc.url}${path}`, { headers: key === undefined ? {} : bearer(key) });
    const text = await res.text();
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    return {
      status: res.status,
      text,
      body: isJson ? JSON.parse(text) : undefined,
      headers: Object.fromEntries(res.headers),
    };
  };
  const inspectWs = (key: string) => rawUpgrade(`${svc.url}/inspect/ws?token=${key}`);

  it('a chat key messages, and is refused 403 on /metrics, /api/config.yaml, /inspect/ws and connect-server', async () => {
    const sent = await rawRequest(`${svc.url}/api/message-sync`, {
      method: 'POST',
      headers: { ...json, ...bearer(CHAT) },
      body: JSON.stringify({ message: 'hello' }),
    });
    expect(sent.status).toBe(200);
    for (const path of ['/metrics', '/api/config.yaml']) {
      const res = await get(path, CHAT);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'inspect', principal: 'alice' } });
      expect(res.headers['www-authenticate']).toBe('Bearer error="insufficient_scope"');
      expect(res.text).not.toContain(CHAT);
    }
    expect((await inspectWs(CHAT)).status).toBe(403);
    const connectRes = await rawRequest(`${svc.url}/api/connect-server`, {
      method: 'POST',
      headers: { ...json, ...bearer(CHAT) },
      body: connect,
    });
    expect(connectRes.status).toBe(403);
    expect(connectRes.body.error).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'admin' } });
  });

  it('no or a wrong credential is 401 everywhere, as before', async () => {
    for (const res of [
      await get('/api/sessions'),
      await get('/api/sessions', 'wrong-key-0123456789abcdef'),
      await get('/metrics'),
      await inspectWs('nope'),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    expect((await get('/api/health/live')).status).toBe(200); // public
  });

  it('an inspect key reads /metrics, /api/config.yaml and /inspect/ws, and may not chat', async () => {
    expect((await get('/metrics', INSPECT)).status).toBe(200);
    const config = await get('/api/config.yaml', INSPECT);
    expect(config.status).toBe(200);
    for (const key of [CHAT, INSPECT, ADMIN]) expect(config.text).not.toContain(key);
    expect((await inspectWs(INSPECT)).status).toBe(101);
    expect((await get('/api/sessions', INSPECT)).status).toBe(403);
  });

  it('an admin key does all of it', async () => {
    expect((await get('/metrics', ADMIN)).status).toBe(200);
    expect((await get('/api/config.yaml', ADMIN)).status).toBe(200);
    expect((await inspectWs(ADMIN)).status).toBe(101);
    expect((await get('/api/sessions', ADMIN)).status).toBe(200);
    const res = await rawRequest(`${svc.url}/api/connect-server`, {
      method: 'POST',
      headers: { ...json, ...bearer(ADMIN) },
      body: connect,
    });
    expect(res.status).not.toBe(401);
    expect(res.status).not.toBe(403);
  });

  it('a JWT works on REST, on the WebSocket (?token=) and on /mcp; its scopes hold', async () => {
    const jwt = await token('alice@example', 'chat openid');
    expect((await get('/api/sessions', jwt)).status).toBe(200);
    const ws = await connectWs(`${svc.wsUrl}?token=${jwt}`);
    ws.close();
    const mcp = await rawRequest(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders, ...bearer(jwt) },
      body: ping,
    });
    expect(mcp.status).toBe(200);
    const metrics = await get('/metrics', jwt);
    expect(metrics.status).toBe(403);
    expect(metrics.body.error).toMatchObject({ details: { principal: 'jwt:alice@example' } });
    expect((await get('/metrics', await token('bob', ['inspect']))).status).toBe(200);
    expect(
      (
        await rawRequest(`${svc.url}/mcp`, {
          method: 'POST',
          headers: { ...mcpHeaders, ...bearer(await token('bob', ['inspect'])) },
          body: ping,
        })
      ).status,
    ).toBe(403);
  });

  it('the OpenAPI document declares the bearer scheme and the scope of each operation', async () => {
    const doc = (await get('/api/openapi.json')).body;
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['bearer']);
    expect(doc.paths['/api/sessions'].get).toMatchObject({ security: [{ bearer: [] }], 'x-scope': 'chat' });
    expect(doc.paths['/metrics'].get).toMatchObject({ security: [{ bearer: [] }], 'x-scope': 'inspect' });
    expect(doc.paths['/api/connect-server'].post).toMatchObject({ 'x-scope': 'admin' });
    expect(doc.paths['/api/health/live'].get.security).toEqual([]);
  });

  it('logs name the principal, never the key or the token', async () => {
    const jwt = await token('carol', 'chat');
    expect((await get('/api/sessions', INSPECT)).status).toBe(403);
    expect((await get('/metrics', INSPECT)).status).toBe(200);
    (await connectWs(`${svc.wsUrl}?token=${jwt}`)).close();
    (await connectWs(svc.wsUrl, { headers: bearer(CHAT) })).close();
    const all = logs.join('');
    expect(all).toContain('"principal":"jwt:carol"');
    expect(all).toContain('"principal":"alice"');
    expect(all).toMatch(/"path":"\/metrics","status":200,"principal":"grafana"/);
    for (const secret of [CHAT, INSPECT, ADMIN, jwt]) expect(all).not.toContain(secret);
  });
});

describe('a JWT from a JWKS URL', () => {
  let svc: RunningApp;
  let jwks: Server;
  let served: { keys: JWK[] };
  let fetches = 0;

  beforeAll(async () => {
    jwks = createServer((_req, res) => {
      fetches++;
      res.writeHead(200, json).end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const { port } = jwks.address() as AddressInfo;
    served = { keys: [] };
    svc = await startApp({
      server: {
        auth: {
          jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: `http://127.0.0.1:${port}/jwks.json`, jwksCooldownMs: 0 },
        },
      },
    });
  });
  afterAll(async () => {
    await svc.stop();
    await new Promise((resolve) => jwks.close(resolve));
  });

  it('accepts a token of a new key (unknown kid) once the set is rotated: the set is refetched', async () => {
    const first = await signer('k1');
    served = { keys: [first.jwk] };
    const get = async (sign: (sub: string, scope: string) => Promise<string>) =>
      rawRequest(`${svc.url}/api/sessions`, { headers: bearer(await sign('dave', 'chat')) });
    expect((await get(first.sign)).status).toBe(200);
    const before = fetches;
    const second = await signer('k2');
    expect((await get(second.sign)).status).toBe(401); // not in the set yet: refetched, still unknown
    served = { keys: [second.jwk] };
    expect((await get(second.sign)).status).toBe(200);
    expect(fetches).toBeGreaterThan(before);
  });
});
