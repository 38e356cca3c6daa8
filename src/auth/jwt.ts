import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, jwtVerify, type JSONWebKeySet } from 'jose';
import type { AuthConfig } from '../config/index.ts';
import { isScopeName, type Principal, type ScopeName } from './principal.ts';

type JwtConfig = NonNullable<AuthConfig['jwt']>;

/** A key set fetch gives up after this long (jose's `timeoutDuration`). */
export const JWKS_TIMEOUT_MS = 5_000;
/** A key set response larger than this is refused (read through jose's `customFetch`). */
export const JWKS_MAX_BYTES = 256 * 1024;

/** `fetch` whose response body is cut off with an error past `maxBytes` (the JWKS endpoint is trusted, its size is not). */
function boundedFetch(maxBytes: number): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!res.body) return res;
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > maxBytes) throw new Error(`JWKS response larger than ${maxBytes} bytes`);
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new Error(`JWKS response larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
    return new Response(Buffer.concat(chunks), { status: res.status, headers: res.headers });
  };
}

/** A subject that can name a session owner (src/session-id.ts: MAX_OWNER_LENGTH). */
const isSubject = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= 128 && !value.includes('\u0000');

/** Scope names of a claim: a space-separated string or an array of strings; unknown names are dropped. */
export function scopesOf(claim: unknown): ScopeName[] {
  const names = typeof claim === 'string' ? claim.split(/\s+/) : Array.isArray(claim) ? claim : [];
  return [...new Set(names.filter(isScopeName))];
}

/**
 * Bearer JSON Web Tokens. Contracts:
 * - A token is accepted only when its signature verifies with a key of the set, its `alg` is one of
 *   `algorithms` (never `none`), `iss` and `aud` match, and `exp`/`nbf` hold (jose's checks).
 * - `jwksFile` is read once, at creation (a bad file throws there). `jwksUrl` is fetched on first use
 *   and again on an unknown `kid`, at most once per `jwksCooldownMs`; each fetch is bounded by
 *   JWKS_TIMEOUT_MS and JWKS_MAX_BYTES, redirects are not followed.
 * - The principal is `jwt:<subject claim>` with the scopes of the scopes claim, owning the sessions
 *   of that name; a token without a subject of 1–128 characters (no NUL) is refused. `verify` answers `undefined` for every refusal (the caller answers 401).
 */
export function createJwtVerifier(
  config: JwtConfig,
  onError?: (err: unknown) => void,
): (token: string) => Promise<Principal | undefined> {
  const keys =
    config.jwksFile !== undefined
      ? createLocalJWKSet(JSON.parse(readFileSync(config.jwksFile, 'utf8')) as JSONWebKeySet)
      : createRemoteJWKSet(new URL(config.jwksUrl ?? ''), {
          timeoutDuration: JWKS_TIMEOUT_MS,
          cooldownDuration: config.jwksCooldownMs,
          [customFetch]: boundedFetch(JWKS_MAX_BYTES),
        });
  return async (token) => {
    // Not a compact JWS: not a token (a wrong key, most likely); no verification attempted.
    if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) return undefined;
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: config.algorithms,
      });
      const subject = payload[config.subjectClaim];
      if (!isSubject(subject)) return undefined;
      const name = `jwt:${subject}`;
      return { name, scopes: new Set(scopesOf(payload[config.scopesClaim])), via: 'jwt', owner: name };
    } catch (err) {
      // Refused tokens are the client's business; a key set that cannot be fetched is the operator's.
      if (!(err instanceof errors.JOSEError) || err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid)
        onError?.(err);
      return undefined;
    }
  };
}
