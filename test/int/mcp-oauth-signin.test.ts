/**
 * Signing in to OAuth-protected tool servers when the first sign-in is not the last (issue 37; the MCP conformance
 * scenarios auth/scope-step-up, auth/scope-retry-limit, auth/iss-*, auth/authorization-server-migration), against
 * the real fixture (test/fixtures/mcp/oauth-server.js): a tool that needs more scope fails that call with where to
 * sign in, and the new sign-in asks for the scopes held besides the new one; sign-ins the server keeps refusing stop
 * being offered after `oauth.maxSignIns`; an authorization answer from another issuer is refused (RFC 9207); a
 * server that moved to another authorization server gets a new registration there.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startOAuthFixture } from '../fixtures/mcp/oauth-server.js';
import { connectAtRuntime, executeTool, serverRecord, signIn, textOf } from '../support/oauth.ts';
import { appPool } from '../support/start-app.ts';

const ADMIN = 'admin-key-0123456789';
const pool = appPool();
const fixtures: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await pool.stopAll();
});
afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.close()));
});

const fixture = async (options: Parameters<typeof startOAuthFixture>[0] = {}) => {
  const f = await startOAuthFixture(options);
  fixtures.push(f);
  return f;
};
const start = () => pool.start({ server: { auth: { adminKey: ADMIN } } });
const record = (app: Awaited<ReturnType<typeof start>>, name: string) => serverRecord(app, name, ADMIN);
const scopeOf = (url: string | undefined) => new URL(url!).searchParams.get('scope');

describe('signing in again', () => {
  it('a tool that needs more scope fails its call with where to sign in; the new sign-in keeps the scope held', async () => {
    // Its token answers name no scope (RFC 6749 §5.1 allows it): what was asked for is what is held.
    const f = await fixture({
      scopesSupported: ['notes:read'],
      require: { 'tools/call': ['notes:write'], '*': ['notes:read'] },
      omitTokenScope: true,
    });
    const app = await start();
    await connectAtRuntime(app, ADMIN, 'notes', { type: 'http', baseUrl: f.url, oauth: {} });
    const first = (await record(app, 'notes'))!.authorizationUrl;
    expect(scopeOf(first)).toBe('notes:read');
    expect((await signIn(first!)).status).toBe(200);

    const refused = await executeTool(app, ADMIN, 'notes', 'echo', { message: 'hi' });
    expect(refused.status).toBe(500);
    expect(refused.body.error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED' });
    expect(refused.body.error?.details?.reason).toMatch(
      /^authorization required: an admin signs in at the authorizationUrl .*"notes:read notes:write"/,
    );
    // The server stays connected for what its token allows, and shows the new sign-in.
    const waiting = await record(app, 'notes');
    expect(waiting?.status).toBe('connected');
    expect(scopeOf(waiting?.authorizationUrl)?.split(' ').sort()).toEqual(['notes:read', 'notes:write']);

    expect((await signIn(waiting!.authorizationUrl!)).status).toBe(200);
    expect(textOf(await executeTool(app, ADMIN, 'notes', 'echo', { message: 'hi' }))).toBe('hi');
    expect((await record(app, 'notes'))?.authorizationUrl).toBeUndefined();
  });

  it('stops offering a sign-in after oauth.maxSignIns the server still refuses, until the server is restarted', async () => {
    // The server asks for a scope its authorization server never grants.
    const f = await fixture({
      scopesSupported: ['notes:admin'],
      require: { '*': ['notes:admin'] },
      grantable: ['notes:read'],
    });
    const app = await start();
    await connectAtRuntime(app, ADMIN, 'stubborn', { type: 'http', baseUrl: f.url, oauth: { maxSignIns: 2 } });
    for (let i = 0; i < 2; i++) {
      const url = (await record(app, 'stubborn'))?.authorizationUrl;
      expect(url, `sign-in ${i + 1} is offered`).toBeDefined();
      expect((await signIn(url!)).html).toContain('Sign-in failed');
    }
    const gaveUp = await record(app, 'stubborn');
    expect(gaveUp).toMatchObject({
      status: 'error',
      error: expect.stringMatching(
        /still refuses access after 2 sign-ins in a row \(it asks for scope "notes:admin"\).*restarted/,
      ),
    });
    expect(gaveUp?.authorizationUrl).toBeUndefined();
    expect(f.stats.authorizations).toBe(2);

    const restarted = await fetch(`${app.url}/api/mcp/servers/stubborn/restart`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(restarted.status).toBe(500);
    expect((await record(app, 'stubborn'))?.authorizationUrl).toBeDefined();
  });

  it.each([
    ['wrong', /issuer|iss/i],
    ['omit', /iss/i],
  ] as const)(
    'refuses an authorization answer whose iss is %s (RFC 9207) before exchanging its code',
    async (iss, reason) => {
      const f = await fixture({ iss });
      const app = await start();
      await connectAtRuntime(app, ADMIN, 'issuer', { type: 'http', baseUrl: f.url, oauth: {} });
      const landed = await signIn((await record(app, 'issuer'))!.authorizationUrl!);
      expect(landed.status).toBe(502);
      expect(landed.html).toMatch(reason);
      expect(f.stats.codeExchanges).toBe(0);
      expect((await record(app, 'issuer'))?.status).toBe('error');
    },
  );

  it('accepts the authorization answer of the issuer it began with', async () => {
    const f = await fixture({ iss: 'correct' });
    const app = await start();
    await connectAtRuntime(app, ADMIN, 'issuer', { type: 'http', baseUrl: f.url, oauth: {} });
    expect((await signIn((await record(app, 'issuer'))!.authorizationUrl!)).status).toBe(200);
    expect(f.stats.codeExchanges).toBe(1);
  });

  it('registers anew with the authorization server a server moved to, and never shows it the old client (SEP-2352)', async () => {
    const before = await fixture();
    const after = await fixture();
    before.trust(after);
    after.acceptResource(before.url);
    const app = await start();
    await connectAtRuntime(app, ADMIN, 'moving', { type: 'http', baseUrl: before.url, oauth: {} });
    const first = new URL((await record(app, 'moving'))!.authorizationUrl!);
    expect((await signIn(first.href)).status).toBe(200);

    before.moveTo(`${after.base}/`); // its issuer identifier
    before.forgetAccessTokens();
    const call = await executeTool(app, ADMIN, 'moving', 'whoami');
    expect(call.body.error?.details?.reason).toMatch(/^authorization required/);
    const second = new URL((await record(app, 'moving'))!.authorizationUrl!);
    expect(second.origin).toBe(after.base);
    expect(second.searchParams.get('client_id')).not.toBe(first.searchParams.get('client_id'));
    expect(after.stats.registrations).toBe(1);

    expect((await signIn(second.href)).status).toBe(200);
    expect(textOf(await executeTool(app, ADMIN, 'moving', 'whoami'))).toBe(
      `client ${second.searchParams.get('client_id')}`,
    );
  });
});
