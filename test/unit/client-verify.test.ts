/**
 * The client's verifiers refuse by default (issue 85): a webhook's tolerance that is not a finite number ≥ 0 or a
 * missing secret is an INVALID_SIGNATURE refusal (not a TypeError, never an acceptance); a push notification's JWT
 * needs an audience, a body whenever it signs one, `nbf` and `iat` not in the future, a compact JWS in canonical
 * base64url under an EdDSA key; its JWKS, served on a loopback port, is kept by `kid` and fetched with a time limit
 * (a loopback server that accepts and never answers stands for a silent host).
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentdError, verifyPushNotification, verifyWebhook } from '../../src/client/index.ts';
import { createPushSigner } from '../../src/auth/notification-signer.ts';
import { signedHeaders } from '../../src/webhooks/sign.ts';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const AUD = 'http://127.0.0.1:9/push';
const BODY = '{"task":{"id":"t1"}}';
const refused = (message: RegExp) => ({
  name: 'AgentdError',
  code: 'INVALID_SIGNATURE',
  message: expect.stringMatching(message),
});

let jwks: Server;
let silent: Server;
let base: string;
let silentUrl: string;
/** What the JWKS server answers, and the requests it got by path. */
let served: { keys: Record<string, unknown>[] } = { keys: [] };
const hits = new Map<string, number>();
let urls = 0;
/** A JWKS URL no other test used: its own entry in the verifier's cache. */
const freshJwksUrl = () => `${base}/jwks-${++urls}.json`;

let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let publicJwk: Record<string, unknown>;

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
};

beforeAll(async () => {
  jwks = createServer((req, res) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
  });
  silent = createServer(() => undefined);
  base = await listen(jwks);
  silentUrl = `${await listen(silent)}/.well-known/jwks.json`;
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'EdDSA', use: 'sig' };
  served = { keys: [publicJwk] };
});
afterAll(async () => {
  silent.closeAllConnections();
  await Promise.all([jwks, silent].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

const nowS = () => Math.floor(Date.now() / 1000);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A token signed with the test's key: agentd's claims unless `claims` or `header` say otherwise. */
const token = (claims: JWTPayload = {}, header: Record<string, unknown> = {}) =>
  new SignJWT({ taskId: 't1', request_body_sha256: sha256(BODY), iat: nowS(), exp: nowS() + 300, ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'JWT', ...header })
    .setIssuer('agent')
    .setAudience(AUD)
    .sign(privateKey);

const checkOf = (extra: Record<string, unknown> = {}) => ({
  jwksUrl: freshJwksUrl(),
  audience: AUD,
  issuer: 'agent',
  body: BODY,
  ...extra,
});

describe('verifyWebhook refuses by default', () => {
  const yearAgo = Date.now() - 365 * 24 * 3600 * 1000;
  const old = signedHeaders(SECRET, 'msg_1', yearAgo, BODY);

  it('accepts a fresh delivery, and a year-old one only with a tolerance of a year', async () => {
    const fresh = signedHeaders(SECRET, 'msg_2', Date.now(), BODY);
    await expect(verifyWebhook(SECRET, fresh, BODY, { toleranceSeconds: 300 })).resolves.toEqual(JSON.parse(BODY));
    await expect(verifyWebhook(SECRET, old, BODY, { toleranceSeconds: 366 * 24 * 3600 })).resolves.toBeDefined();
  });

  it.each([NaN, Infinity, -Infinity, -1])('refuses toleranceSeconds %s, even for a year-old delivery', async (t) => {
    await expect(verifyWebhook(SECRET, old, BODY, { toleranceSeconds: t })).rejects.toMatchObject(
      refused(/toleranceSeconds/),
    );
  });

  it('refuses a now that is not a finite time', async () => {
    await expect(verifyWebhook(SECRET, old, BODY, { now: NaN })).rejects.toMatchObject(refused(/now/));
  });

  it.each([undefined, null, '', 'whsec_', 42])(
    'refuses the secret %s with its own error, not a TypeError',
    async (s) => {
      const fresh = signedHeaders(SECRET, 'msg_3', Date.now(), BODY);
      const err = await verifyWebhook(s as string, fresh, BODY).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentdError);
      expect(err).toMatchObject(refused(/secret/));
    },
  );

  it('refuses a secret that is not base64 and headers that are not headers with its own error', async () => {
    const fresh = signedHeaders(SECRET, 'msg_4', Date.now(), BODY);
    await expect(verifyWebhook('whsec_!!!*', fresh, BODY)).rejects.toBeInstanceOf(AgentdError);
    await expect(verifyWebhook(SECRET, undefined as never, BODY)).rejects.toBeInstanceOf(AgentdError);
  });
});

describe('verifyPushNotification refuses by default', () => {
  it("accepts agentd's own token with every argument", async () => {
    const signer = await createPushSigner(Buffer.alloc(32, 3));
    const url = freshJwksUrl();
    served = signer.jwks();
    try {
      const jwt = await signer.sign(
        { issuer: 'agent', audience: AUD, taskId: 't9', deliveryId: 'd9', body: BODY },
        Date.now(),
      );
      const claims = await verifyPushNotification(`Bearer ${jwt}`, {
        jwksUrl: url,
        audience: AUD,
        issuer: 'agent',
        body: BODY,
      });
      expect(claims).toMatchObject({ taskId: 't9', jti: 'd9', aud: AUD });
    } finally {
      served = { keys: [publicJwk] };
    }
  });

  it('requires an audience, and a jwksUrl', async () => {
    const jwt = await token();
    const { audience: _, ...noAudience } = checkOf();
    await expect(verifyPushNotification(jwt, noAudience as never)).rejects.toMatchObject(refused(/audience/));
    await expect(verifyPushNotification(jwt, checkOf({ audience: '' }))).rejects.toMatchObject(refused(/audience/));
    await expect(verifyPushNotification(jwt, checkOf({ jwksUrl: undefined }))).rejects.toMatchObject(
      refused(/jwksUrl/),
    );
    await expect(verifyPushNotification(jwt, checkOf({ audience: 'http://elsewhere/' }))).rejects.toMatchObject(
      refused(/aud/),
    );
  });

  it('checks the body whenever the token signs one: a token with a body hash is refused without a body', async () => {
    const jwt = await token();
    await expect(verifyPushNotification(jwt, checkOf())).resolves.toMatchObject({ taskId: 't1' });
    await expect(verifyPushNotification(jwt, checkOf({ body: undefined }))).rejects.toMatchObject(
      refused(/pass the body/),
    );
    await expect(verifyPushNotification(jwt, checkOf({ body: `${BODY} ` }))).rejects.toMatchObject(
      refused(/not the one signed/),
    );
    const unhashed = await token({ request_body_sha256: undefined });
    await expect(verifyPushNotification(unhashed, checkOf())).rejects.toMatchObject(refused(/not the one signed/));
  });

  it('refuses nbf and iat in the future beyond 60 s of skew', async () => {
    await expect(verifyPushNotification(await token({ nbf: nowS() + 30 }), checkOf())).resolves.toBeDefined();
    await expect(verifyPushNotification(await token({ nbf: nowS() + 120 }), checkOf())).rejects.toMatchObject(
      refused(/nbf/),
    );
    await expect(verifyPushNotification(await token({ iat: nowS() + 120 }), checkOf())).rejects.toMatchObject(
      refused(/iat/),
    );
    await expect(verifyPushNotification(await token({ nbf: 'soon' as never }), checkOf())).rejects.toMatchObject(
      refused(/nbf/),
    );
    await expect(verifyPushNotification(await token({ exp: nowS() - 1 }), checkOf())).rejects.toMatchObject(
      refused(/expired/),
    );
  });

  it('refuses a token string changed in any way: whitespace, segments, a non-canonical encoding', async () => {
    const jwt = await token();
    const [head, payload, signature] = jwt.split('.') as [string, string, string];
    const sigBytes = Buffer.from(signature, 'base64url');
    // 64 bytes in 86 characters: the last one's 4 low bits are unused, so 16 spellings decode the same.
    const last = signature.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    const twin = `${signature.slice(0, -1)}${sibling}`;
    expect(Buffer.from(twin, 'base64url')).toEqual(sigBytes);
    const changed = [
      `Bearer  ${jwt}`,
      ` ${jwt}`,
      `${jwt} `,
      `${jwt}\n`,
      `${head}.${payload}.${signature.slice(0, 40)} ${signature.slice(40)}`,
      `${jwt}.`,
      `${jwt}.${signature}`,
      `${head}.${payload}.${twin}`,
      `${head}.${payload}.${signature}==`,
      `${head}.${payload}.${sigBytes.toString('base64')}`,
    ];
    for (const text of changed)
      await expect(verifyPushNotification(text, checkOf()), JSON.stringify(text)).rejects.toMatchObject({
        code: 'INVALID_SIGNATURE',
      });
    await expect(verifyPushNotification(`bearer ${jwt}`, checkOf())).resolves.toBeDefined();
  });

  it("refuses alg none and an algorithm other than the key's", async () => {
    const jwt = await token();
    const [, payload, signature] = jwt.split('.') as [string, string, string];
    const headOf = (h: object) => Buffer.from(JSON.stringify(h)).toString('base64url');
    for (const alg of ['none', 'HS256', 'ES256'])
      await expect(
        verifyPushNotification(`${headOf({ alg, kid: 'k1' })}.${payload}.${signature}`, checkOf()),
      ).rejects.toMatchObject(refused(/is not EdDSA/));
    await expect(verifyPushNotification(`${headOf({ alg: 'none' })}.${payload}.`, checkOf())).rejects.toMatchObject(
      refused(/compact/),
    );
    const crit = await token({}, { crit: ['b64'], b64: true });
    await expect(verifyPushNotification(crit, checkOf())).rejects.toMatchObject(refused(/critical/));
    served = { keys: [{ ...publicJwk, alg: 'ES256' }] };
    try {
      await expect(verifyPushNotification(jwt, checkOf())).rejects.toMatchObject(refused(/not an EdDSA/));
    } finally {
      served = { keys: [publicJwk] };
    }
  });

  it('keeps the JWKS by kid: fetched once, again only for an unknown kid and at most once per 30 s', async () => {
    const check = checkOf();
    const path = new URL(check.jwksUrl).pathname;
    const jwt = await token();
    await verifyPushNotification(jwt, check);
    await verifyPushNotification(jwt, check);
    await Promise.all([1, 2, 3].map(() => verifyPushNotification(jwt, check)));
    expect(hits.get(path)).toBe(1);
    // An unknown kid within 30 s of the last fetch: refused without a fetch.
    const unknown = await token({}, { kid: 'k2' });
    served = { keys: [publicJwk, { ...publicJwk, kid: 'k2' }] };
    try {
      await expect(verifyPushNotification(unknown, check)).rejects.toMatchObject(refused(/no key k2/));
      expect(hits.get(path)).toBe(1);
      // 30 s later the key set is fetched again for it (a rotation), and kept.
      const later = Date.now() + 31_000;
      await expect(verifyPushNotification(unknown, { ...check, now: later })).resolves.toBeDefined();
      expect(hits.get(path)).toBe(2);
      await verifyPushNotification(unknown, { ...check, now: later });
      await verifyPushNotification(jwt, { ...check, now: later });
      const other = await token({}, { kid: 'k3' });
      await expect(verifyPushNotification(other, { ...check, now: later })).rejects.toMatchObject(refused(/no key k3/));
      expect(hits.get(path)).toBe(2);
      await expect(verifyPushNotification(other, { ...check, now: later + 31_000 })).rejects.toMatchObject(
        refused(/no key k3/),
      );
      expect(hits.get(path)).toBe(3);
    } finally {
      served = { keys: [publicJwk] };
    }
  });

  it('fails in time when the JWKS host accepts and never answers', { timeout: 15_000 }, async () => {
    const jwt = await token();
    const started = Date.now();
    await expect(
      verifyPushNotification(jwt, { ...checkOf(), jwksUrl: silentUrl, jwksTimeoutMs: 300 }),
    ).rejects.toMatchObject(refused(/did not answer within 300 ms/));
    expect(Date.now() - started).toBeLessThan(3000);
    await expect(
      verifyPushNotification(jwt, { ...checkOf(), jwksUrl: silentUrl, jwksTimeoutMs: NaN }),
    ).rejects.toMatchObject(refused(/jwksTimeoutMs/));
  });

  it('gives a JWKS fetch 5 s by default', { timeout: 15_000 }, async () => {
    const jwt = await token();
    const started = Date.now();
    await expect(verifyPushNotification(jwt, { ...checkOf(), jwksUrl: `${silentUrl}?default` })).rejects.toMatchObject(
      refused(/did not answer within 5000 ms/),
    );
    expect(Date.now() - started).toBeLessThan(9000);
  });
});
