/**
 * What a receiver checks of what agentd sends it, with WebCrypto only (Node 20+, browsers):
 * - `verifyWebhook`: a Standard Webhooks delivery (src/webhooks/sign.ts): `webhook-signature` holds `v1,<base64
 *   HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` under the secret's bytes (base64 after `whsec_`), and
 *   the timestamp is within `toleranceSeconds` of now. Answers the parsed body.
 * - `verifyPushNotification`: an A2A push notification's JWT (src/auth/notification-signer.ts): EdDSA (Ed25519),
 *   its `kid` a key of the JWKS at `jwksUrl`, not expired; `aud`, `iss` and the body's sha256 checked when given.
 *   Answers its claims.
 * Either throws an AgentdError `INVALID_SIGNATURE` (status 0) saying what failed.
 */
import { AgentdError } from './errors.ts';

const invalid = (message: string) => new AgentdError(0, 'INVALID_SIGNATURE', message);
const enc = new TextEncoder();

const fromBase64 = (text: string): Uint8Array => {
  const plain = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(plain + '='.repeat((4 - (plain.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
};
const toBase64 = (bytes: ArrayBuffer): string => btoa(String.fromCharCode(...new Uint8Array(bytes)));
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
  /** How far the delivery's timestamp may be from now (default 300 s). */
  toleranceSeconds?: number;
  /** Now, in ms (tests). */
  now?: number;
}

export async function verifyWebhook(
  secret: string,
  headers: HeaderBag,
  body: string,
  check: WebhookCheck = {},
): Promise<unknown> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw invalid('missing webhook-id, webhook-timestamp or webhook-signature');
  const seconds = Number(timestamp);
  const now = (check.now ?? Date.now()) / 1000;
  if (!Number.isFinite(seconds) || Math.abs(now - seconds) > (check.toleranceSeconds ?? 300))
    throw invalid('webhook-timestamp is outside the tolerance');
  const key = await crypto.subtle.importKey(
    'raw',
    fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const expected = toBase64(await crypto.subtle.sign('HMAC', key, enc.encode(`${id}.${timestamp}.${body}`)));
  const match = signatures.split(' ').some((s) => s.startsWith('v1,') && sameText(s.slice(3), expected));
  if (!match) throw invalid('no webhook-signature matches the body');
  return JSON.parse(body) as unknown;
}

export interface PushCheck {
  /** agentd's JWKS, `<base>/.well-known/jwks.json`. */
  jwksUrl: string;
  /** The receiver's own URL (the token's `aud`). */
  audience?: string;
  /** The token's `iss`. */
  issuer?: string;
  /** The body received: its sha256 must be the token's `request_body_sha256`. */
  body?: string;
  /** Now, in ms (tests). */
  now?: number;
  fetch?: typeof fetch;
}

export interface PushClaims {
  iss?: string;
  aud?: string | string[];
  iat?: number;
  exp?: number;
  jti?: string;
  taskId?: string;
  request_body_sha256?: string;
  [claim: string]: unknown;
}

const part = <T>(text: string | undefined, what: string): T => {
  try {
    return JSON.parse(new TextDecoder().decode(fromBase64(text ?? ''))) as T;
  } catch {
    throw invalid(`the token's ${what} is not base64url JSON`);
  }
};

export async function verifyPushNotification(jwt: string, check: PushCheck): Promise<PushClaims> {
  const token = jwt.replace(/^Bearer\s+/i, '');
  const [head, payload, signature] = token.split('.');
  if (signature === undefined) throw invalid('not a JWT');
  const protectedHeader = part<{ alg?: string; kid?: string }>(head, 'header');
  if (protectedHeader.alg !== 'EdDSA') throw invalid(`alg ${String(protectedHeader.alg)} is not EdDSA`);
  const res = await (check.fetch ?? fetch)(check.jwksUrl);
  if (!res.ok) throw invalid(`the JWKS answered ${res.status}`);
  const { keys } = (await res.json()) as { keys: (Record<string, string> & { kid?: string })[] };
  const jwk = keys.find((k) => k.kid === protectedHeader.kid);
  if (!jwk) throw invalid(`no key ${String(protectedHeader.kid)} in the JWKS`);
  const key = await crypto.subtle.importKey('jwk', jwk as object, { name: 'Ed25519' }, false, ['verify']);
  const ok = await crypto.subtle.verify('Ed25519', key, fromBase64(signature), enc.encode(`${head}.${payload}`));
  if (!ok) throw invalid('the signature does not match');
  const claims = part<PushClaims>(payload, 'payload');
  const now = (check.now ?? Date.now()) / 1000;
  if (typeof claims.exp !== 'number' || claims.exp < now) throw invalid('the token expired');
  if (check.issuer !== undefined && claims.iss !== check.issuer) throw invalid('iss is not the expected issuer');
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (check.audience !== undefined && !audiences.includes(check.audience)) throw invalid('aud is not this receiver');
  if (check.body !== undefined) {
    const digest = toHex(await crypto.subtle.digest('SHA-256', enc.encode(check.body)));
    if (claims.request_body_sha256 !== digest) throw invalid('the body is not the one signed');
  }
  return claims;
}
