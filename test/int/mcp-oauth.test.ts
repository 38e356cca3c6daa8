/**
 * OAuth 2.1 against a real OAuth-protected MCP server (test/fixtures/mcp/oauth-server.js, built with the SDK's
 * server auth helpers): the authorization-code flow end to end without a browser (the record's URL, the
 * fixture's auto-approving authorize endpoint, agentd's callback), a restart that needs no new sign-in, the same
 * flow with a client registered beforehand (no dynamic registration), refresh before expiry, the client-credentials
 * grant, and hostile authorization servers refused before anything is sent.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { appPool, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type Frame } from '../support/ws-client.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { M2M_CLIENT, WEB_CLIENT, startOAuthFixture } from '../fixtures/mcp/oauth-server.js';
import {
  connectAtRuntime as connect,
  executeTool,
  serverRecord,
  serverRecords,
  secretRecords,
  signIn,
} from '../support/oauth.ts';
import { SERVER_ERROR_SHOWN } from '../../src/http/server-view.ts';
import { RECORDS_FILE } from '../../src/store/records/index.ts';

const ADMIN = 'admin-key-0123456789';
const CHAT = 'chat-key-0123456789ab';
const pool = appPool();
const fixtures: { close(): Promise<void> }[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await pool.stopAll();
});
afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.close()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const fixture = async (options: Parameters<typeof startOAuthFixture>[0] = {}) => {
  const f = await startOAuthFixture(options);
  fixtures.push(f);
  return f;
};
const dataDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-oauth-'));
  dirs.push(dir);
  return dir;
};

const servers = (app: RunningApp, key = ADMIN) => serverRecords(app, key);
const server = (app: RunningApp, name: string, key = ADMIN) => serverRecord(app, name, key);
const callTool = (app: RunningApp, serverId: string, tool: string, args: object = {}) =>
  executeTool(app, ADMIN, serverId, tool, args);

/** Every log line of the apps started with it, at trace level and unredacted: tokens must not be there at all. */
const logLines: string[] = [];
const log = pino(
  { level: 'trace' },
  new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString()), done()) }),
);

const start = (dir: string, mcpServers: Record<string, unknown>) =>
  pool.start(
    { storage: { type: 'jsonl', dir }, server: { auth: { apiKey: CHAT, adminKey: ADMIN } }, mcpServers },
    { deps: { log } },
  );

const connectAtRuntime = (app: RunningApp, name: string, baseUrl: string, oauth: object = {}) =>
  connect(app, ADMIN, name, { type: 'http', baseUrl, oauth: { scopes: ['mcp:tools'], ...oauth } });

describe('OAuth-protected tool servers', () => {
  it('goes from "authorization required" to connected after the sign-in, and again after a restart without a new one', async () => {
    const f = await fixture();
    const dir = await dataDir();
    const mcpServers = { secure: { type: 'http', baseUrl: f.url, oauth: { scopes: ['mcp:tools'] } } };
    const first = await start(dir, mcpServers);

    const waiting = await server(first, 'secure');
    expect(waiting).toMatchObject({ status: 'error', error: expect.stringMatching(/^authorization required/) });
    const url = waiting!.authorizationUrl!;
    expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');
    expect(new URL(url).searchParams.get('resource')).toBe(f.url);
    expect(f.stats.registrations).toBe(1); // dynamic client registration
    // A chat principal is not shown where to sign in (whoever signs in picks the account).
    expect((await server(first, 'secure', CHAT))?.authorizationUrl).toBeUndefined();

    const secretFile = async () => {
      const [record] = (await secretRecords(dir)).values();
      return JSON.parse(record!) as {
        pending?: { codeVerifier: string };
        tokens: { access_token: string; refresh_token: string };
        client: { client_id: string };
      };
    };
    const verifier = (await secretFile()).pending!.codeVerifier;
    const landed = await signIn(url);
    expect(landed).toMatchObject({ status: 200, html: expect.stringContaining('is connected') });
    expect((await server(first, 'secure'))?.status).toBe('connected');
    expect((await callTool(first, 'secure', 'echo', { message: 'hi' })).body.data?.content[0]?.text).toBe('hi');
    // The URL was used once: following it again changes nothing.
    expect((await signIn(url)).status).toBe(400);

    // Tokens are stored in a file only this user reads (the record store's), never in the export.
    expect((await secretRecords(dir)).size).toBe(1);
    expect((await stat(join(dir, RECORDS_FILE))).mode & 0o777).toBe(0o600);
    const stored = await secretFile();
    expect(stored.pending).toBeUndefined();
    const exported = await (
      await fetch(`${first.url}/api/config.yaml`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).text();
    expect(exported).not.toContain(stored.tokens.access_token);
    expect(JSON.stringify(await servers(first))).not.toContain(stored.tokens.access_token);

    const visits = f.stats.authorizations;
    await pool.stop(first);
    const second = await start(dir, mcpServers);
    expect((await server(second, 'secure'))?.status).toBe('connected');
    expect((await callTool(second, 'secure', 'whoami')).body.success).toBe(true);
    expect(f.stats).toMatchObject({ authorizations: visits, codeExchanges: 1, registrations: 1 });
    // Never logged, even at trace level before any redaction.
    const logged = logLines.join('');
    expect(logged).toContain('MCP server connected');
    for (const secret of [stored.tokens.access_token, stored.tokens.refresh_token, verifier])
      expect(logged).not.toContain(secret);
  });

  it('sends the sign-in URL in mcpServerStatus frames to admins only', async () => {
    const f = await fixture();
    const app = await start(await dataDir(), { secure: { type: 'http', baseUrl: f.url, oauth: {} } });
    const admin = await connectWs(app.wsUrl, { headers: { authorization: `Bearer ${ADMIN}` } });
    const chat = await connectWs(app.wsUrl, { headers: { authorization: `Bearer ${CHAT}` } });
    try {
      const restarted = await fetch(`${app.url}/api/mcp/servers/secure/restart`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      expect(restarted.status).toBe(500);
      const isError = (fr: Frame) =>
        fr.event === 'mcpServerStatus' && fr.data.name === 'secure' && fr.data.status === 'error';
      const [seenByAdmin, seenByChat] = await Promise.all([admin.next(isError), chat.next(isError)]);
      expect(seenByAdmin.data.authorizationUrl).toBe((await server(app, 'secure'))?.authorizationUrl);
      expect(seenByChat.data).not.toHaveProperty('authorizationUrl');
      expect(seenByAdmin.data.error).toMatch(/^authorization required/);
      expect(seenByChat.data.error).toBe(SERVER_ERROR_SHOWN); // a server's error text is for admins (issue 57)
    } finally {
      admin.close();
      chat.close();
    }
  });

  it('signs in with a configured clientId and secret: no dynamic registration, and the server connects', async () => {
    // Registered beforehand with one fixed callback URL (a load balancer's, say); the server offers no registration at all.
    const redirectUrl = 'http://127.0.0.1:1/api/oauth/callback';
    const f = await fixture({ webClientRedirectUri: redirectUrl, dynamicRegistration: false });
    const dir = await dataDir();
    const oauth = {
      clientId: WEB_CLIENT.client_id,
      clientSecret: WEB_CLIENT.client_secret,
      scopes: ['mcp:tools'],
      redirectUrl,
    };
    const app = await start(dir, { preset: { type: 'http', baseUrl: f.url, oauth } });

    const waiting = await server(app, 'preset');
    expect(waiting).toMatchObject({ status: 'error', error: expect.stringMatching(/^authorization required/) });
    const url = new URL(waiting!.authorizationUrl!);
    expect(
      Object.fromEntries(
        ['client_id', 'redirect_uri', 'code_challenge_method', 'resource'].map((k) => [k, url.searchParams.get(k)]),
      ),
    ).toEqual({
      client_id: WEB_CLIENT.client_id,
      redirect_uri: redirectUrl,
      code_challenge_method: 'S256',
      resource: f.url,
    });
    expect(await signIn(url.href, app)).toMatchObject({ status: 200, html: expect.stringContaining('is connected') });
    expect((await server(app, 'preset'))?.status).toBe('connected');
    // The tokens were issued to the configured client (the token request authenticated with its secret).
    expect((await callTool(app, 'preset', 'whoami')).body.data?.content[0]?.text).toBe(
      `client ${WEB_CLIENT.client_id}`,
    );
    expect(f.stats).toMatchObject({ registrationRequests: 0, registrations: 0, authorizations: 1, codeExchanges: 1 });

    // The configured client is configuration: the stored record holds no registration and never its secret.
    const [stored = ''] = (await secretRecords(dir)).values();
    expect(JSON.parse(stored)).not.toHaveProperty('client');
    expect(stored).not.toContain(WEB_CLIENT.client_secret);
    const exported = await (
      await fetch(`${app.url}/api/config.yaml`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).text();
    expect(exported).not.toContain(WEB_CLIENT.client_secret);
  });

  it('refreshes tokens before they expire (refresh-token grant), also after a restart on another port', async () => {
    const f = await fixture({ accessTtlSec: 2 });
    const dir = await dataDir();
    const app = await start(dir, { short: { type: 'http', baseUrl: f.url, oauth: {} } });
    await signIn((await server(app, 'short'))!.authorizationUrl!);
    expect((await server(app, 'short'))?.status).toBe('connected');
    await until(async () => {
      const { body } = await callTool(app, 'short', 'echo', { message: 'x' });
      return body.success && f.stats.refreshes > 0;
    }, 'a refresh before the 2 s token expired');
    // The calls never went out with an expired token: none was refused, the server stays connected.
    expect((await server(app, 'short'))?.status).toBe('connected');

    // A restart on another port (another callback URL) keeps the registration its refresh token is bound to.
    await pool.stop(app);
    const again = await start(dir, { short: { type: 'http', baseUrl: f.url, oauth: {} } });
    const before = f.stats.refreshes;
    await until(
      async () => (await callTool(again, 'short', 'echo', { message: 'y' })).body.success && f.stats.refreshes > before,
      'a refresh after the restart',
    );
    expect((await server(again, 'short'))?.status).toBe('connected');
    expect(f.stats).toMatchObject({ registrations: 1, codeExchanges: 1 });
  });

  it('connects a machine-to-machine server with the client-credentials grant, no sign-in', async () => {
    const f = await fixture();
    const app = await start(await dataDir(), {
      m2m: {
        type: 'http',
        baseUrl: f.url,
        oauth: { grant: 'client_credentials', clientId: M2M_CLIENT.client_id, clientSecret: M2M_CLIENT.client_secret },
      },
    });
    expect(await server(app, 'm2m')).toMatchObject({ status: 'connected' });
    expect((await callTool(app, 'm2m', 'whoami')).body.data?.content[0]?.text).toBe('client m2m-client');
    expect(f.stats).toMatchObject({ clientCredentials: 1, authorizations: 0, registrations: 0 });
    const exported = await (
      await fetch(`${app.url}/api/config.yaml`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).text();
    expect(exported).not.toContain(M2M_CLIENT.client_secret);
  });

  it.each([
    ['issuer', /[Ii]ssuer .*someone-else/], // the SDK's own RFC 8414 §3.3 check
    ['resource', /names resource .*\/other, not this server/],
    ['insecure', /token endpoint http:\/\/auth\.example\.com is not HTTPS/],
  ] as const)(
    'refuses a hostile authorization server (%s) before registering or asking for a token',
    async (hostile, reason) => {
      const f = await fixture({ hostile });
      const app = await start(await dataDir(), { evil: { type: 'http', baseUrl: f.url, oauth: {} } });
      const rec = await server(app, 'evil');
      expect(rec?.status).toBe('error');
      expect(rec?.error).toMatch(reason);
      expect(rec?.authorizationUrl).toBeUndefined();
      expect(f.stats).toMatchObject({ registrations: 0, tokenRequests: 0, authorizations: 0 });
    },
  );

  it('signs in a server connected at runtime, its OAuth requests held to the runtime URL policy', async () => {
    const f = await fixture();
    const app = await start(await dataDir(), {});
    const connected = await connectAtRuntime(app, 'late', f.url);
    expect(connected.body.error?.message).toMatch(/authorization required/);
    const waiting = await server(app, 'late');
    expect(waiting).toMatchObject({ status: 'error', error: expect.stringMatching(/^authorization required/) });
    expect(await signIn(waiting!.authorizationUrl!)).toMatchObject({
      status: 200,
      html: expect.stringContaining('is connected'),
    });
    expect((await server(app, 'late'))?.status).toBe('connected');
    expect((await callTool(app, 'late', 'echo', { message: 'late hello' })).body.data?.content[0]?.text).toBe(
      'late hello',
    );
  });

  it('refuses a runtime server whose authorization server the runtime URL policy does not allow, before anything is sent to it', async () => {
    const f = await fixture({ authorizationServer: 'http://localhost:1/' });
    const app = await pool.start(
      {
        storage: { type: 'jsonl', dir: await dataDir() },
        server: { auth: { apiKey: CHAT, adminKey: ADMIN }, mcp: { allowedHosts: ['127.0.0.1'] } },
      },
      { deps: { log } },
    );
    const refused = await connectAtRuntime(app, 'pointed', f.url);
    expect(refused.body.error?.message).toMatch(/refused to contact localhost:1/);
    expect((await server(app, 'pointed'))?.authorizationUrl).toBeUndefined();
    expect(Object.keys(f.stats.hosts)).toEqual(['127.0.0.1']);
    expect(f.stats).toMatchObject({ registrations: 0, tokenRequests: 0 });
  });

  it('answers an unknown state with a page that changes nothing', async () => {
    const app = await start(await dataDir(), {});
    const res = await fetch(`${app.url}/api/oauth/callback?state=abc.nope&code=123`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('No sign-in is pending');
  });

  describe.skipIf(!hasRedisServer())('with instances sharing Redis', () => {
    let redis: RedisServer;
    afterAll(async () => {
      await redis?.stop();
    });

    it('one sign-in serves every instance: the pending sign-in and the tokens are shared', async () => {
      redis = await startRedis();
      const f = await fixture();
      // Behind a load balancer every instance has one public callback URL.
      const oauth = { redirectUrl: 'http://127.0.0.1:1/api/oauth/callback' };
      const doc = () => ({
        storage: { type: 'redis', url: redis.url, keyPrefix: 'oauth-shared:' },
        server: { auth: { apiKey: CHAT, adminKey: ADMIN } },
        mcpServers: { shared: { type: 'http', baseUrl: f.url, oauth } },
      });
      const a = await pool.start(doc());
      const b = await pool.start(doc());
      const url = (await server(a, 'shared'))?.authorizationUrl;
      expect(url).toBeDefined();
      expect((await server(b, 'shared'))?.authorizationUrl).toBe(url); // b kept a's pending sign-in
      expect(await signIn(url!, b)).toMatchObject({ status: 200 }); // the callback lands on b
      expect((await server(b, 'shared'))?.status).toBe('connected');
      const restarted = await fetch(`${a.url}/api/mcp/servers/shared/restart`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      expect(restarted.status).toBe(200);
      expect((await callTool(a, 'shared', 'whoami')).body.success).toBe(true);
      expect(f.stats).toMatchObject({ registrations: 1, codeExchanges: 1 });
    });

    it('instances finding the same tokens expiring send one refresh grant: the others adopt its rotated tokens', async () => {
      redis ??= await startRedis();
      const f = await fixture({ accessTtlSec: 2 });
      const doc = () => ({
        storage: { type: 'redis', url: redis.url, keyPrefix: 'oauth-race:' },
        server: { auth: { apiKey: CHAT, adminKey: ADMIN } },
        mcpServers: {
          racy: { type: 'http', baseUrl: f.url, oauth: { redirectUrl: 'http://127.0.0.1:1/api/oauth/callback' } },
        },
      });
      const a = await pool.start(doc());
      const b = await pool.start(doc());
      expect(await signIn((await server(a, 'racy'))!.authorizationUrl!, a)).toMatchObject({ status: 200 });
      const restarted = await fetch(`${b.url}/api/mcp/servers/racy/restart`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      expect(restarted.status).toBe(200); // b now holds the same tokens
      // Both call at once, again and again, until the tokens pass half their life and both find them expiring.
      await until(async () => {
        const calls = await Promise.all([a, b].map((app) => callTool(app, 'racy', 'echo', { message: 'race' })));
        expect(calls.map((c) => c.body.success)).toEqual([true, true]);
        return f.stats.refreshes > 0;
      }, 'a refresh before the 2 s tokens expired');
      expect(f.stats.refusedRefreshes).toBe(0);
      expect(await Promise.all([a, b].map(async (app) => (await server(app, 'racy'))?.status))).toEqual([
        'connected',
        'connected',
      ]);
    });

    it('a server connected at runtime with oauth reaches every instance, and one sign-in serves them all', async () => {
      redis ??= await startRedis();
      const f = await fixture();
      const doc = () => ({
        storage: { type: 'redis', url: redis.url, keyPrefix: 'oauth-runtime:' },
        server: { auth: { apiKey: CHAT, adminKey: ADMIN } },
      });
      const a = await pool.start(doc());
      const b = await pool.start(doc());
      await connectAtRuntime(a, 'late', f.url, { redirectUrl: 'http://127.0.0.1:1/api/oauth/callback' });
      const url = (await server(a, 'late'))?.authorizationUrl;
      expect(url).toBeDefined();
      await until(
        async () => (await server(b, 'late'))?.authorizationUrl === url,
        'b has the runtime server and its pending sign-in',
      );
      expect(await signIn(url!, b)).toMatchObject({ status: 200 });
      const restarted = await fetch(`${a.url}/api/mcp/servers/late/restart`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      expect(restarted.status).toBe(200);
      expect((await callTool(a, 'late', 'whoami')).body.success).toBe(true);
      expect(f.stats).toMatchObject({ registrations: 1, codeExchanges: 1 });
    });
  });
});
