/**
 * What a receiver checks of what agentd sends it, with WebCrypto only (Node 20+, browsers):
 * - `verifyWebhook`: a Standard Webhooks delivery (src/webhooks/sign.ts): `webhook-signature` holds `v1,<base64
 *   HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` under the secret's bytes (base64 after `whsec_`), and
 *   the timestamp is within `toleranceSeconds` (finite, ≥ 0) of now. Answers the parsed body.
 * - `verifyPushNotification`: an A2A push notification's JWT (src/auth/notification-signer.ts), a compact JWS in
 *   canonical base64url and nothing else: EdDSA (Ed25519) under the key of its `kid` in the JWKS at `jwksUrl` (that
 *   key an Ed25519 one, its `alg` EdDSA if it says one), `exp` not passed, `nbf` and `iat` not in the future beyond
 *   60 s, `aud` the receiver's `audience` (required), `iss` checked when given, and the body's sha256 whenever the
 *   token carries one (a body hash with no body given, or a body with no hash, is refused). The key set is kept by
 *   URL and `kid` for the module's life: fetched once, again only for an unknown `kid` and at most once per 30 s,
 *   each fetch given `jwksTimeoutMs` (5 s).
 * Either throws an AgentdError `INVALID_SIGNATURE` (status 0) saying what failed, for bad arguments too (a missing
 * secret, a NaN tolerance): never a TypeError, never an acceptance.
 */
import { AgentdError } from './errors.ts';

const invalid = (message: string) => new AgentdError(0, 'INVALID_SIGNATURE', message);
const enc = new TextEncoder();

const fromBase64 = (text: string): Uint8Array => {
  const plain = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(plain + '='.repeat((4 - (plain.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
};
const toBase64 = (bytes: ArrayBuffer | Uint8Array): string => btoa(String.fromCharCode(...new Uint8Array(bytes)));
const toHex = (bytes: ArrayBuffer): string =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** Compares two strings in time that depends on their length only. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** A fetch `Headers`, or Node's `req.headers`. */
type HeaderBag = { get(name: string): string | null } | Record<string, string | string[] | undefined>;
const hasGet = (h: HeaderBag): h is { get(name: string): string | null } => typeof h.get === 'function';
function header(headers: HeaderBag, name: string): string | undefined {
  if (hasGet(headers)) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found[0] : found;
}

export interface WebhookCheck {
  /** How far the delivery's timestamp may be from now (default 300 s); finite and ≥ 0. */
  toleranceSeconds?: number;
  /** Now, in ms (tests). */
  now?: number;
}

/** Runs a verification, any failure of its own (a TypeError of a bad argument, a DOMException) as INVALID_SIGNATURE. */
async function refusing<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw err instanceof AgentdError ? err : invalid(`${what}: ${(err as Error)?.message ?? String(err)}`);
  }
}

/** `check.now` in seconds, refused unless finite. */
function nowOf(now: number | undefined): number {
  const ms = now ?? Date.now();
  if (!Number.isFinite(ms)) throw invalid('now is not a finite time');
  return ms / 1000;
}

export function verifyWebhook(
  secret: string,
  headers: HeaderBag,
  body: string,
  check: WebhookCheck = {},
): Promise<unknown> {
  return refusing('the webhook cannot be verified', async () => {
    const tolerance = check.toleranceSeconds ?? 300;
    if (!Number.isFinite(tolerance) || tolerance < 0) throw invalid('toleranceSeconds is not a finite number ≥ 0');
    const bytes = typeof secret === 'string' ? fromBase64(secret.replace(/^whsec_/, '')) : new Uint8Array();
    if (bytes.length === 0) throw invalid('no webhook secret');
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signatures = header(headers, 'webhook-signature');
    if (!id || !timestamp || !signatures) throw invalid('missing webhook-id, webhook-timestamp or webhook-signature');
    if (!/^\d{1,12}$/.test(timestamp) || !(Math.abs(nowOf(check.now) - Number(timestamp)) <= tolerance))
      throw invalid('webhook-timestamp is outside the tolerance');
    const key = await crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const expected = toBase64(await crypto.subtle.sign('HMAC', key, enc.encode(`${id}.${timestamp}.${body}`)));
    const match = signatures.split(' ').some((s) => s.startsWith('v1,') && sameText(s.slice(3), expected));
    if (!match) throw invalid('no webhook-signature matches the body');
    return JSON.parse(body) as unknown;
  });
}

export interface PushCheck {
  /** agentd's JWKS, `<base>/.well-known/jwks.json`. */
  jwksUrl: string;
  /** The receiver's own URL, the push config's `url` (the token's `aud`). Required. */
  audience: string;
  /** The token's `iss` (agentd's `name`). */
  issuer?: string;
  /** The body received, as text: its sha256 must be the token's `request_body_sha256`. */
  body?: string;
  /** How long a fetch of the JWKS may take, in ms (default 5 000). */
  jwksTimeoutMs?: number;
  /** Now, in ms (tests). */
  now?: number;
  fetch?: typeof fetch;
}

export interface PushClaims {
  iss?: string;
  aud?: string | string[];
  iat?: number;
  nbf?: number;
  exp?: number;
  jti?: string;
  taskId?: string;
  request_body_sha256?: string;
  [claim: string]: unknown;
}

/** How far ahead of this clock `iat` and `nbf` may be (the sender's clock), in seconds. */
const SKEW_S = 60;
/** The least time between two fetches of one JWKS, in ms. */
const JWKS_COOLDOWN_MS = 30_000;

/** A key of a JWKS. */
type Jwk = { kid?: unknown; kty?: unknown; crv?: unknown; alg?: unknown };
interface KeySet {
  keys: Map<string, Jwk>;
  /** When it was fetched (ms, the verifications' `now`). */
  at: number;
}
/** The key sets fetched, by URL, and the fetch under way of each. */
const keySets = new Map<string, KeySet>();
const fetching = new Map<string, Promise<KeySet>>();

const part = <T>(text: string, what: string): T => {
  const value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(text))) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(`the token's ${what} is not an object`);
  return value as T;
};

async function fetchKeys(check: PushCheck, at: number): Promise<KeySet> {
  const ms = check.jwksTimeoutMs ?? 5000;
  if (!(ms > 0 && ms < 2 ** 31)) throw invalid('jwksTimeoutMs is not a time > 0');
  const stop = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(invalid(`the JWKS did not answer within ${ms} ms`));
      stop.abort();
    }, ms);
  });
  try {
    const res = await Promise.race([(check.fetch ?? fetch)(check.jwksUrl, { signal: stop.signal }), late]);
    if (!res.ok) throw invalid(`the JWKS answered ${res.status}`);
    const { keys } = (await Promise.race([res.json(), late])) as { keys: unknown };
    if (!Array.isArray(keys)) throw invalid('the JWKS has no keys');
    const byKid = new Map<string, Jwk>();
    for (const k of keys as Jwk[]) if (typeof k?.kid === 'string') byKid.set(k.kid, k);
    return { keys: byKid, at };
  } finally {
    clearTimeout(timer);
  }
}

/** The key of `kid`: from the kept set, or one fetch (shared by the verifications waiting for it). */
async function keyOf(check: PushCheck, kid: string, at: number): Promise<Jwk> {
  const url = check.jwksUrl;
  let set = keySets.get(url);
  if (!set?.keys.has(kid) && (!set || Math.abs(at - set.at) >= JWKS_COOLDOWN_MS)) {
    let pending = fetching.get(url);
    if (!pending) {
      pending = fetchKeys(check, at).finally(() => fetching.delete(url));
      fetching.set(url, pending);
    }
    set = await pending;
    keySets.set(url, set);
  }
  const jwk = set.keys.get(kid);
  if (!jwk) throw invalid(`no key ${kid} in the JWKS`);
  return jwk;
}

export function verifyPushNotification(jwt: string, check: PushCheck): Promise<PushClaims> {
  return refusing('the push notification cannot be verified', async () => {
    if (typeof check.audience !== 'string' || check.audience === '') throw invalid('no audience to check aud against');
    if (typeof check.jwksUrl !== 'string' || check.jwksUrl === '') throw invalid('no jwksUrl');
    const nowS = nowOf(check.now);
    const token = /^bearer /i.test(jwt) ? jwt.slice(7) : jwt;
    const segments = token.split('.');
    const [head = '', payload = '', signature = ''] = segments;
    if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) throw invalid('not a compact JWT');
    if (segments.some((s) => toBase64(fromBase64(s)).replace(/=+$/, '') !== s.replace(/-/g, '+').replace(/_/g, '/')))
      throw invalid('the token is not in canonical base64url');
    const protectedHeader = part<{ alg?: unknown; kid?: unknown; crit?: unknown }>(head, 'header');
    if (protectedHeader.alg !== 'EdDSA') throw invalid(`alg ${String(protectedHeader.alg)} is not EdDSA`);
    if (protectedHeader.crit !== undefined) throw invalid('the token has critical header parameters');
    if (typeof protectedHeader.kid !== 'string') throw invalid('the token names no kid');
    const jwk = await keyOf(check, protectedHeader.kid, nowS * 1000);
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || (jwk.alg ?? 'EdDSA') !== 'EdDSA')
      throw invalid(`the key ${protectedHeader.kid} is not an EdDSA (Ed25519) key`);
    const key = await crypto.subtle.importKey('jwk', jwk as object, { name: 'Ed25519' }, false, ['verify']);
    const ok = await crypto.subtle.verify('Ed25519', key, fromBase64(signature), enc.encode(`${head}.${payload}`));
    if (!ok) throw invalid('the signature does not match');
    const claims = part<PushClaims>(payload, 'payload');
    if (typeof claims.exp !== 'number' || !(claims.exp > nowS)) throw invalid('the token expired');
    if (claims.nbf !== undefined && !(typeof claims.nbf === 'number' && claims.nbf <= nowS + SKEW_S))
      throw invalid('the token is not valid yet (nbf)');
    if (claims.iat !== undefined && !(typeof claims.iat === 'number' && claims.iat <= nowS + SKEW_S))
      throw invalid('the token was issued in the future (iat)');
    if (check.issuer !== undefined && claims.iss !== check.issuer) throw invalid('iss is not the expected issuer');
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(check.audience)) throw invalid('aud is not this receiver');
    const signed = claims.request_body_sha256;
    if (signed !== undefined || check.body !== undefined) {
      if (typeof check.body !== 'string') throw invalid('the token signs a body: pass the body received');
      const digest = toHex(await crypto.subtle.digest('SHA-256', enc.encode(check.body)));
      if (signed !== digest) throw invalid('the body is not the one signed');
    }
    return claims;
  });
}
