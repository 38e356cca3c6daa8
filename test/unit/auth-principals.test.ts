/** Principal resolution (src/auth): named keys, the two shorthands, anonymous, and JWTs against a JWKS file. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKeyTable, createPrincipals, scopesOf, type Principal } from '../../src/auth/index.ts';
import { parseConfig } from '../../src/config/index.ts';
import { AppError } from '../../src/errors/index.ts';
import { parse } from 'yaml';
import { readDoc } from '../support/golden.ts';

const CHAT = 'chat-key-0123456789abcdef';
const INSPECT = 'inspect-key-0123456789abcdef';
const ADMIN = 'admin-key-0123456789abcdef';
const scopes = (p: Principal | undefined) => [...(p?.scopes ?? [])].sort();

/** The AppError `fn` rejects with. */
async function refusal(fn: () => Promise<unknown>): Promise<AppError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('keys', () => {
  const principals = createPrincipals({
    keys: [
      { name: 'alice', key: CHAT, scopes: ['chat'] },
      { name: 'grafana', key: INSPECT, scopes: ['inspect'] },
      { name: 'ops', key: ADMIN, scopes: ['admin'] },
    ],
  });

  it('resolves each key to its named principal with its scopes, and nobody for anything else', async () => {
    expect(await principals.resolve(CHAT)).toMatchObject({ name: 'alice', via: 'key' });
    expect(scopes(await principals.resolve(INSPECT))).toEqual(['inspect']);
    expect(await principals.resolve('chat-key-0123456789abcdeX')).toBeUndefined();
    expect(await principals.resolve('')).toBeUndefined();
    expect(principals.configured).toBe(true);
    expect(scopes(principals.anonymous)).toEqual([]);
  });

  it('admits by scope: admin implies every scope, public needs nothing', async () => {
    expect((await principals.authorize(CHAT, 'chat')).name).toBe('alice');
    expect((await principals.authorize(ADMIN, 'inspect')).name).toBe('ops');
    expect((await principals.authorize(ADMIN, 'chat')).name).toBe('ops');
    expect((await principals.authorize(undefined, 'public')).name).toBe('anonymous');
    expect((await principals.authorize(INSPECT, 'inspect')).name).toBe('grafana');
  });

  it('refuses no or a wrong credential 401, a principal short of the scope 403', async () => {
    expect(await refusal(() => principals.authorize(undefined, 'chat'))).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await refusal(() => principals.authorize('wrong-key-0123456789abcdef', 'chat'))).toMatchObject({
      code: 'UNAUTHORIZED',
    });
    const forbidden = await refusal(() => principals.authorize(CHAT, 'inspect'));
    expect(forbidden).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'inspect', principal: 'alice' } });
    expect(JSON.stringify(forbidden.details) + forbidden.message).not.toContain(CHAT);
    expect(await refusal(() => principals.authorize(INSPECT, 'chat'))).toMatchObject({
      code: 'FORBIDDEN',
      details: { scope: 'chat' },
    });
    expect(await refusal(() => principals.authorize(CHAT, 'admin'))).toMatchObject({
      code: 'FORBIDDEN',
      details: { scope: 'admin' },
    });
  });

  it('compares every key in constant time on digests: the first of equal keys wins, no key short-circuits', () => {
    const table = createKeyTable([
      { name: 'a', key: CHAT, scopes: ['chat'], owner: 'a' },
      { name: 'b', key: INSPECT, scopes: ['inspect'], owner: 'b' },
    ]);
    expect(table(INSPECT)?.name).toBe('b');
    expect(table(CHAT)?.name).toBe('a');
    // Lengths differ: digests make them comparable (timingSafeEqual would throw on unequal lengths).
    expect(table('x')).toBeUndefined();
    expect(table(`${CHAT}${CHAT}`)).toBeUndefined();
  });
});

describe('shorthands and anonymous', () => {
  it('no credential configured: everyone is anonymous with every scope, whatever they send', async () => {
    const open = createPrincipals({});
    expect(open.configured).toBe(false);
    for (const credential of [undefined, 'anything']) {
      const p = await open.authorize(credential, 'admin');
      expect(p).toMatchObject({ name: 'anonymous', via: 'anonymous' });
      expect(scopes(p)).toEqual(['admin', 'chat', 'inspect', 'schedule']);
    }
  });

  it('apiKey alone is a chat key of the unnamed namespace: inspection and admin routes are 403 for it', async () => {
    const p = createPrincipals({ apiKey: CHAT });
    expect(await p.resolve(CHAT)).toMatchObject({ name: 'api', via: 'key', owner: undefined });
    expect(scopes(await p.resolve(CHAT))).toEqual(['chat']);
    expect((await p.authorize(CHAT, 'approve')).name).toBe('api');
    for (const scope of ['admin', 'inspect'] as const) {
      expect(await refusal(() => p.authorize(CHAT, scope))).toMatchObject({
        code: 'FORBIDDEN',
        details: { scope, principal: 'api' },
      });
    }
    expect(await refusal(() => p.authorize(undefined, 'chat'))).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Missing or invalid API key',
      details: { scope: 'client' },
    });
  });

  it('named keys and tokens own the sessions of their name; shorthands and anonymous own none', async () => {
    const p = createPrincipals({ apiKey: CHAT, keys: [{ name: 'alice', key: INSPECT, scopes: ['chat'] }] });
    expect((await p.resolve(INSPECT))?.owner).toBe('alice');
    expect((await p.resolve(CHAT))?.owner).toBeUndefined();
    expect(p.anonymous.owner).toBeUndefined();
  });

  it('apiKey and adminKey: api is chat, admin is admin; the api key short of a scope keeps the 401 of before', async () => {
    const p = createPrincipals({ apiKey: CHAT, adminKey: ADMIN });
    expect(scopes(await p.resolve(CHAT))).toEqual(['chat']);
    expect(await p.resolve(ADMIN)).toMatchObject({ name: 'admin', via: 'key' });
    expect(scopes(await p.resolve(ADMIN))).toEqual(['admin']);
    for (const scope of ['admin', 'inspect'] as const) {
      expect(await refusal(() => p.authorize(CHAT, scope))).toMatchObject({
        code: 'UNAUTHORIZED',
        message: 'This operation needs the admin key',
        details: { scope },
      });
    }
    // Approvals: admin while the adminKey shorthand is set.
    expect(await refusal(() => p.authorize(CHAT, 'approve'))).toMatchObject({
      code: 'UNAUTHORIZED',
      details: { scope: 'admin' },
    });
    expect((await p.authorize(ADMIN, 'approve')).name).toBe('admin');
  });

  it('adminKey alone guards only what needs more than chat, as before', async () => {
    const p = createPrincipals({ adminKey: ADMIN });
    expect((await p.authorize(undefined, 'chat')).name).toBe('anonymous');
    expect((await p.authorize(ADMIN, 'chat')).name).toBe('admin');
    expect(await refusal(() => p.authorize(undefined, 'inspect'))).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await refusal(() => p.authorize(undefined, 'approve'))).toMatchObject({
      code: 'UNAUTHORIZED',
      details: { scope: 'admin' },
    });
  });

  it('approvals need chat when no adminKey is set', async () => {
    const p = createPrincipals({ keys: [{ name: 'alice', key: CHAT, scopes: ['chat'] }] });
    expect((await p.authorize(CHAT, 'approve')).name).toBe('alice');
    expect(p.allows(await p.authorize(CHAT), 'approve')).toBe(true);
  });

  it('config: keys ≥ 16 characters, names unique (shorthands included), scopes a non-empty subset, one JWKS source', () => {
    const auth = (a: unknown) => () => parseConfig({ llm: { model: 'm' }, server: { auth: a } });
    expect(auth({ keys: [{ name: 'a', key: 'short', scopes: ['chat'] }] })).toThrow(/key/);
    expect(auth({ keys: [{ name: 'a', key: CHAT, scopes: [] }] })).toThrow(/scopes/);
    expect(auth({ keys: [{ name: 'a', key: CHAT, scopes: ['root'] }] })).toThrow(/scopes/);
    expect(
      auth({
        keys: [
          { name: 'a', key: CHAT, scopes: ['chat'] },
          { name: 'a', key: INSPECT, scopes: ['chat'] },
        ],
      }),
    ).toThrow(/used twice/);
    expect(auth({ apiKey: CHAT, keys: [{ name: 'api', key: INSPECT, scopes: ['chat'] }] })).toThrow(/used twice/);
    expect(auth({ jwt: { issuer: 'i', audience: 'a' } })).toThrow(/exactly one/);
    expect(
      auth({ jwt: { issuer: 'i', audience: 'a', jwksFile: 'x.json', jwksUrl: 'https://idp.example/jwks' } }),
    ).toThrow(/exactly one/);
    const env = parseConfig(
      { llm: { model: 'm' }, server: { auth: { keys: [{ name: 'ci', key: '$CI_KEY', scopes: ['chat'] }] } } },
      '(inline)',
      { CI_KEY: INSPECT },
    );
    expect(env.server.auth.keys[0]?.key).toBe(INSPECT);
    expect(env.server.auth.jwt).toBeUndefined();
  });
});

describe('JWT', () => {
  const issuer = 'https://idp.example';
  const audience = 'agentd';
  let sign: (
    claims: Record<string, unknown>,
    opts?: { kid?: string; iss?: string; aud?: string; exp?: string | number },
  ) => Promise<string>;
  let otherKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  let principals: ReturnType<typeof createPrincipals>;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    otherKey = (await generateKeyPair('ES256')).privateKey;
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const dir = await mkdtemp(join(tmpdir(), 'agentd-jwks-'));
    const jwksFile = join(dir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [jwk] }));
    sign = (claims, opts = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: opts.kid ?? 'k1' })
        .setIssuer(opts.iss ?? issuer)
        .setAudience(opts.aud ?? audience)
        .setIssuedAt()
        .setExpirationTime(opts.exp ?? '5m')
        .sign(opts.kid === 'k2' ? otherKey : privateKey);
    const config = parseConfig({ llm: { model: 'm' }, server: { auth: { jwt: { issuer, audience, jwksFile } } } });
    principals = createPrincipals(config.server.auth);
  });

  it('a key set file that is not JSON, or not { keys: [...] }, stops the principals at creation', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-jwks-bad-'));
    const make = async (text: string) => {
      const jwksFile = join(dir, `${text.length}.json`);
      await writeFile(jwksFile, text);
      const config = parseConfig({ llm: { model: 'm' }, server: { auth: { jwt: { issuer, audience, jwksFile } } } });
      return () => createPrincipals(config.server.auth);
    };
    expect(await make('{ not json')).toThrow(SyntaxError);
    expect(await make('{"keys": {"kty": "EC"}}')).toThrow(/JSON Web Key Set malformed/);
    expect(await make('{"keys": ["k1"]}')).toThrow(/JSON Web Key Set malformed/);
  });

  it('a valid token is the principal jwt:<sub> with the scopes of its claim, string or array', async () => {
    const p = await principals.resolve(await sign({ sub: 'alice', scope: 'chat inspect openid' }));
    expect(p).toMatchObject({ name: 'jwt:alice', via: 'jwt' });
    expect(scopes(p)).toEqual(['chat', 'inspect']);
    expect(scopes(await principals.resolve(await sign({ sub: 'bob', scope: ['admin', 'root'] })))).toEqual(['admin']);
    expect(scopes(await principals.resolve(await sign({ sub: 'carol' })))).toEqual([]);
    expect(await refusal(async () => principals.authorize(await sign({ sub: 'carol' }), 'chat'))).toMatchObject({
      code: 'FORBIDDEN',
      details: { principal: 'jwt:carol' },
    });
  });

  it('refuses a wrong issuer, a wrong audience, an expired token, an unknown kid, alg none and no subject', async () => {
    const refused = [
      await sign({ sub: 'a', scope: 'chat' }, { iss: 'https://evil.example' }),
      await sign({ sub: 'a', scope: 'chat' }, { aud: 'someone-else' }),
      await sign({ sub: 'a', scope: 'chat' }, { exp: Math.floor(Date.now() / 1000) - 3600 }),
      await sign({ sub: 'a', scope: 'chat' }, { kid: 'k2' }),
      new UnsecuredJWT({ sub: 'a', scope: 'chat' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setExpirationTime('5m')
        .encode(),
      await sign({ scope: 'chat' }),
      'not-a-token',
    ];
    for (const token of refused) {
      expect(await principals.resolve(token)).toBeUndefined();
      expect(await refusal(() => principals.authorize(token, 'chat'))).toMatchObject({ code: 'UNAUTHORIZED' });
    }
  });

  it('reads scope claims leniently: space-separated or an array, unknown names dropped', () => {
    expect(scopesOf(' chat  admin ')).toEqual(['chat', 'admin']);
    expect(scopesOf(['inspect', 3, 'chat', 'chat'])).toEqual(['inspect', 'chat']);
    expect(scopesOf(undefined)).toEqual([]);
  });
});

describe('the examples of docs/auth.md (Principals and scopes)', () => {
  const doc = readDoc('docs/auth.md');
  const section = doc.slice(
    doc.indexOf('## Principals and scopes'),
    doc.indexOf('\n## ', doc.indexOf('## Principals and scopes')),
  );
  const examples = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map(
    ([, text]) => parse(text ?? '') as Record<string, unknown>,
  );

  it('the keys example gives each key its scopes', async () => {
    const env = { ALICE_KEY: CHAT, GRAFANA_KEY: INSPECT, OPS_KEY: ADMIN };
    const config = parseConfig({ llm: { model: 'm' }, ...examples[0] }, '(docs/auth.md)', env);
    const principals = createPrincipals(config.server.auth);
    expect(await principals.resolve(CHAT)).toMatchObject({ name: 'alice' });
    expect(await refusal(() => principals.authorize(CHAT, 'inspect'))).toMatchObject({ code: 'FORBIDDEN' });
    expect((await principals.authorize(INSPECT, 'inspect')).name).toBe('grafana');
    expect((await principals.authorize(ADMIN, 'admin')).name).toBe('ops');
  });

  it('the JWT example is a valid config with the documented defaults', () => {
    const config = parseConfig({ llm: { model: 'm' }, ...examples[1] });
    expect(config.server.auth.jwt).toMatchObject({
      audience: 'agentd',
      subjectClaim: 'sub',
      scopesClaim: 'scope',
      algorithms: ['RS256', 'ES256'],
      jwksCooldownMs: 30_000,
    });
    expect(createPrincipals(config.server.auth).configured).toBe(true); // the URL is fetched on first use only
  });
});
