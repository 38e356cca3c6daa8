/**
 * Sign-in per principal (issue 37, item 3): one OAuth-protected tool server (test/fixtures/mcp/oauth-server.js)
 * with `oauth.per: principal`, two chat principals (alice, bob) and an admin (root). The admin's sign-in lists the
 * server's tools; each principal signs in for itself (`…/sign-in`), its sessions' tool calls carry its own token
 * (the fixture's `user` tool answers whom a token acts for), a principal without one is told where to sign in, no
 * principal sees another's sign-in, and tokens appear in no answer or export. With Redis, a principal's tokens
 * serve it on every instance.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startOAuthFixture } from '../fixtures/mcp/oauth-server.js';
import { ALICE, BOB, ROOT, callAs, namedKeys, untilServersConnected } from '../support/keyed-app.ts';
import { authorize, cookieOf, landAt, secretRecords, signIn } from '../support/oauth.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { appPool, type RunningApp } from '../support/start-app.ts';

const pool = appPool();
const cleanups: (() => Promise<void>)[] = [];
let sim: Simulator | undefined;

afterEach(async () => {
  await pool.stopAll();
});
afterAll(async () => {
  await Promise.all(cleanups.map((c) => c()));
  await sim?.close();
});

const fixture = async (options: Parameters<typeof startOAuthFixture>[0] = {}) => {
  const f = await startOAuthFixture(options);
  cleanups.push(() => f.close());
  return f;
};
const start = async (baseUrl: string, storage: Record<string, unknown>) => {
  sim ??= await startSimulator();
  const mcpServers = {
    notes: { type: 'http', baseUrl, oauth: { per: 'principal', redirectUrl: 'http://127.0.0.1:1/api/oauth/callback' } },
  };
  return pool.start({ storage, server: { auth: { keys: namedKeys } }, mcpServers }, { modelUrl: sim.url });
};
/** The admin signs the server itself in (its tool list), through any instance. */
const adminSignIn = async (app: RunningApp) => {
  const rec = (await callAs(() => app, ROOT, 'GET', '/api/mcp/servers')).body.servers[0];
  expect(rec).toMatchObject({ name: 'notes', status: 'error', oauthPer: 'principal' });
  expect((await signIn(rec.authorizationUrl, app, 'root')).status).toBe(200);
};
const signInAs = async (app: RunningApp, key: string, user: string) => {
  const begun = await callAs(() => app, key, 'POST', '/api/mcp/servers/notes/sign-in');
  expect(begun).toMatchObject({
    status: 200,
    body: { serverId: 'notes', signedIn: false, authorizationUrl: expect.stringContaining('state=') },
  });
  expect((await signIn(begun.body.authorizationUrl, app, user, cookieOf(begun.headers))).status).toBe(200);
};
/** A turn of `key`'s session in which the model calls the `user` tool: what the tool (or its failure) said. */
const userTool = async (app: RunningApp, key: string, sessionId = 'notes-session') =>
  (await callAs(() => app, key, 'POST', '/api/message-sync', { sessionId, message: '[[tool:user]]' })).body
    .response as string;

describe('oauth.per: principal', () => {
  it("each principal signs in for itself, its calls carry its own token, and no one sees another's sign-in", async () => {
    const f = await fixture();
    const dir = await mkdtemp(join(tmpdir(), 'agentd-principals-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const app = await start(f.url, { type: 'jsonl', dir });
    await adminSignIn(app);

    // Before signing in: the call fails with where to sign in, and nothing of alice's went to the server.
    const before = f.stats.mcpAuthorized;
    expect(await userTool(app, ALICE)).toMatch(
      /principal "alice" is not signed in to this server; each principal signs in for itself at POST \/api\/mcp\/servers\/notes\/sign-in/,
    );
    expect(f.stats.mcpAuthorized).toBe(before);
    expect((await callAs(() => app, ALICE, 'GET', '/api/mcp/servers/notes/sign-in')).body).toMatchObject({
      serverId: 'notes',
      signedIn: false,
    });

    const first = await callAs(() => app, ALICE, 'POST', '/api/mcp/servers/notes/sign-in');
    // The same URL again while it is fresh (bound to this latest answer); bob sees neither it nor any server sign-in URL.
    const begun = await callAs(() => app, ALICE, 'POST', '/api/mcp/servers/notes/sign-in');
    expect(begun.body.authorizationUrl).toBe(first.body.authorizationUrl);
    const bobSees = await callAs(() => app, BOB, 'GET', '/api/mcp/servers/notes/sign-in');
    expect(bobSees.body).toEqual({ serverId: 'notes', signedIn: false, timestamp: expect.any(String) });
    expect(JSON.stringify((await callAs(() => app, BOB, 'GET', '/api/mcp/servers')).body)).not.toContain('authorize');
    expect((await signIn(begun.body.authorizationUrl, app, 'alice', cookieOf(begun.headers))).status).toBe(200);
    await signInAs(app, BOB, 'bob');

    expect(await userTool(app, ALICE)).toBe('Tool user returned: user alice');
    expect(await userTool(app, BOB)).toBe('Tool user returned: user bob');
    // The admin's own calls (REST execute) carry the admin's own sign-in: root has not made one.
    const rootCall = await callAs(() => app, ROOT, 'POST', '/api/mcp/servers/notes/tools/user/execute', {});
    expect(rootCall.body.error).toMatchObject({
      code: 'TOOL_EXECUTION_FAILED',
      message: expect.stringMatching(/principal "root" is not signed in/),
    });

    // One record per principal besides the server's own; no token in any answer or the export.
    expect((await secretRecords(dir)).size).toBe(3);
    const exported = await (
      await fetch(`${app.url}/api/config.yaml`, { headers: { authorization: `Bearer ${ROOT}` } })
    ).text();
    const seen = JSON.stringify([
      (await callAs(() => app, ALICE, 'GET', '/api/mcp/servers')).body,
      (await callAs(() => app, ALICE, 'GET', '/api/mcp/servers/notes/sign-in')).body,
      exported,
    ]);
    expect(seen).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/); // the fixture's tokens are UUIDs

    // Alice signs out: her calls are refused again, bob's go on.
    expect((await callAs(() => app, ALICE, 'DELETE', '/api/mcp/servers/notes/sign-in')).body).toMatchObject({
      signedIn: false,
    });
    expect(await userTool(app, ALICE)).toMatch(/is not signed in/);
    expect(await userTool(app, BOB)).toBe('Tool user returned: user bob');
    expect((await secretRecords(dir)).size).toBe(2);
  });

  it("bob's sign-in link opened by alice signs nobody in for bob; bob's own browser completes it, once", async () => {
    const f = await fixture();
    const app = await start(f.url, { type: 'memory' });
    await adminSignIn(app);
    const begun = await callAs(() => app, BOB, 'POST', '/api/mcp/servers/notes/sign-in');
    const cookie = cookieOf(begun.headers);
    expect(begun.headers.get('set-cookie')).toMatch(
      /^agentd-sign-in-[0-9a-f]{16}=[\w-]{43}; Path=\/api\/oauth\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    expect(JSON.stringify(begun.body)).not.toContain(cookie!.split('=')[1]);
    const exchanges = f.stats.codeExchanges;

    // Alice (a browser without bob's cookie, or with one of its own) signs in at the provider as herself.
    const aliceBack = await authorize(begun.body.authorizationUrl, 'alice');
    aliceBack.host = new URL(app.url).host;
    const other = await callAs(() => app, ALICE, 'POST', '/api/mcp/servers/notes/sign-in');
    for (const held of [undefined, cookieOf(other.headers), `${cookie!.split('=')[0]}=forged`]) {
      const landed = await landAt(aliceBack, held);
      expect(landed.status).toBe(400);
      expect(landed.html).toContain('This sign-in was begun by principal &quot;bob&quot; in another browser');
      expect(landed.html).toContain('Nothing was stored');
    }
    expect(f.stats.codeExchanges).toBe(exchanges);
    expect((await callAs(() => app, BOB, 'GET', '/api/mcp/servers/notes/sign-in')).body.signedIn).toBe(false);
    expect(await userTool(app, BOB)).toMatch(/principal "bob" is not signed in/);

    // Bob's own browser completes it: the page names whose sign-in it was; his calls act as bob.
    const bobs = await signIn(begun.body.authorizationUrl, app, 'bob', cookie);
    expect(bobs.status).toBe(200);
    expect(bobs.html).toContain('The sign-in of principal &quot;bob&quot; to the tool server &quot;notes&quot;');
    expect(await userTool(app, BOB)).toBe('Tool user returned: user bob');
    // Used: the same callback again completes nothing, with the cookie or without.
    for (const held of [cookie, undefined]) {
      const again = await landAt(bobs.callback, held);
      expect(again.status).toBe(400);
      expect(again.html).toContain('No sign-in is pending with this state');
    }
    expect(f.stats.codeExchanges).toBe(exchanges + 1);
  });

  it('a server signed in once for everyone has no sign-in per principal', async () => {
    const f = await fixture();
    sim ??= await startSimulator();
    const app = await pool.start(
      { server: { auth: { keys: namedKeys } }, mcpServers: { shared: { type: 'http', baseUrl: f.url, oauth: {} } } },
      { modelUrl: sim.url },
    );
    const refused = await callAs(() => app, ALICE, 'POST', '/api/mcp/servers/shared/sign-in');
    expect(refused).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/signed in once for everyone/) } },
    });
    expect((await callAs(() => app, ALICE, 'GET', '/api/mcp/servers/nope/sign-in')).status).toBe(404);
  });

  describe.skipIf(!hasRedisServer())('with instances sharing Redis', () => {
    let redis: RedisServer;
    afterAll(async () => {
      await redis?.stop();
    });

    it("a principal's sign-in serves it on every instance, and its tokens are refreshed one at a time", async () => {
      redis = await startRedis();
      const f = await fixture({ accessTtlSec: 2 });
      const storage = { type: 'redis', url: redis.url, keyPrefix: 'principals:' };
      const a = await start(f.url, storage);
      const b = await start(f.url, storage);
      await adminSignIn(a);
      await callAs(() => b, ROOT, 'POST', '/api/mcp/servers/notes/restart');
      await untilServersConnected(() => b, 'notes connected on b after its restart', { key: ROOT, timeout: 30_000 });
      await signInAs(b, ALICE, 'alice'); // the callback lands on b; alice chats on a
      // b's restart is shared: a restarts its connection too, so its tools may be a moment away.
      await expect
        .poll(() => userTool(a, ALICE, 'on-a'), { timeout: 30_000, interval: 200 })
        .toBe('Tool user returned: user alice');
      expect(await userTool(b, BOB, 'on-b')).toMatch(/principal "bob" is not signed in/);
      // Both instances call for alice until her 2 s tokens pass half their life: one refresh grant, no refusal.
      await expect
        .poll(
          async () => {
            const replies = await Promise.all([userTool(a, ALICE, 'on-a'), userTool(b, ALICE, 'on-b')]);
            expect(replies).toEqual(['Tool user returned: user alice', 'Tool user returned: user alice']);
            return f.stats.refreshes;
          },
          { timeout: 20_000, interval: 200 },
        )
        .toBeGreaterThan(0);
      expect(f.stats.refusedRefreshes).toBe(0);
    });
  });
});
