/**
 * How agentd presents itself to an OAuth-protected tool server's authorization server (issue 37; the conformance
 * scenarios auth/basic-cimd and auth/client-credentials-jwt, SEP-837), against the real fixture
 * (test/fixtures/mcp/oauth-server.js): the `application_type` of its dynamic registration, a client ID metadata
 * document in place of a registration, and the client-credentials grant authenticated with a private key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startOAuthFixture } from '../fixtures/mcp/oauth-server.js';
import { connectAtRuntime, executeTool, serverRecord, signIn, textOf } from '../support/oauth.ts';
import { appPool, type RunningApp } from '../support/start-app.ts';

const ADMIN = 'admin-key-0123456789';
const pool = appPool();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await pool.stopAll();
});
afterAll(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

const fixture = async (options: Parameters<typeof startOAuthFixture>[0] = {}) => {
  const f = await startOAuthFixture(options);
  cleanups.push(() => f.close());
  return f;
};
const start = (mcpServers: Record<string, unknown> = {}) =>
  pool.start({ server: { auth: { adminKey: ADMIN } }, mcpServers });
const record = (app: RunningApp, name: string) => serverRecord(app, name, ADMIN);

describe('the OAuth client agentd is', () => {
  it('registers as a native application on a loopback callback and as a web application on a public one (SEP-837)', async () => {
    const f = await fixture();
    const app = await start();
    await connectAtRuntime(app, ADMIN, 'local', { type: 'http', baseUrl: f.url, oauth: {} });
    await connectAtRuntime(app, ADMIN, 'public', {
      type: 'http',
      baseUrl: f.url,
      oauth: { redirectUrl: 'https://agentd.example.com/api/oauth/callback' },
    });
    expect(
      f.stats.registered.map((c: { application_type?: string; redirect_uris: string[] }) => [
        c.redirect_uris[0],
        c.application_type,
      ]),
    ).toEqual([
      [`${app.url}/api/oauth/callback`, 'native'],
      ['https://agentd.example.com/api/oauth/callback', 'web'],
    ]);
  });

  it('names itself by its client ID metadata document where the authorization server supports them: no registration', async () => {
    const f = await fixture({ clientIdMetadata: true });
    const app = await start();
    const clientId = 'https://agentd.example.com/oauth/client.json';
    // The document the operator serves at that URL (the fixture stands in for fetching it).
    f.setClientMetadata({
      client_id: clientId,
      client_name: 'agentd',
      redirect_uris: [`${app.url}/api/oauth/callback`],
      token_endpoint_auth_method: 'none',
    });
    await connectAtRuntime(app, ADMIN, 'cimd', {
      type: 'http',
      baseUrl: f.url,
      oauth: { clientMetadataUrl: clientId },
    });
    const url = new URL((await record(app, 'cimd'))!.authorizationUrl!);
    expect(url.searchParams.get('client_id')).toBe(clientId);
    expect((await signIn(url.href)).status).toBe(200);
    expect(textOf(await executeTool(app, ADMIN, 'cimd', 'whoami'))).toBe(`client ${clientId}`);
    expect(f.stats.registrationRequests).toBe(0);
  });

  it('authenticates the client-credentials grant with a JWT signed by its private key, read from a file (private_key_jwt)', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const f = await fixture({ jwtClients: { 'jwt-client': publicKey } });
    const dir = await mkdtemp(join(tmpdir(), 'agentd-key-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await writeFile(join(dir, 'agent.pem'), pem, { mode: 0o600 });

    const app = await start({
      m2m: {
        type: 'http',
        baseUrl: f.url,
        oauth: { grant: 'client_credentials', clientId: 'jwt-client', privateKeyFile: join(dir, 'agent.pem') },
      },
    });
    expect((await record(app, 'm2m'))?.status).toBe('connected');
    expect(f.stats.jwtClient).toBe('jwt-client');
    expect(f.stats.clientCredentials).toBe(1);

    // At runtime the key travels in the request (and is never shown again); a file of agentd's host is refused.
    const inline = await connectAtRuntime(app, ADMIN, 'inline', {
      type: 'http',
      baseUrl: f.url,
      oauth: { grant: 'client_credentials', clientId: 'jwt-client', privateKey: pem },
    });
    expect(inline.status).toBe(200);
    const exported = await (
      await fetch(`${app.url}/api/config.yaml`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).text();
    expect(exported).not.toContain(pem.split('\n')[1]);
    const fromFile = await connectAtRuntime(app, ADMIN, 'file', {
      type: 'http',
      baseUrl: f.url,
      oauth: { grant: 'client_credentials', clientId: 'jwt-client', privateKeyFile: join(dir, 'agent.pem') },
    });
    expect(fromFile).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/privateKeyFile/) } },
    });
  });

  it('a key it cannot use fails the connection with a reason that shows no key', async () => {
    const f = await fixture();
    const app = await start({
      broken: {
        type: 'http',
        baseUrl: f.url,
        oauth: { grant: 'client_credentials', clientId: 'jwt-client', privateKeyFile: '/nonexistent/agent.pem' },
      },
    });
    expect(await record(app, 'broken')).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/private key cannot be used: \/nonexistent\/agent\.pem does not exist/),
    });
  });
});
