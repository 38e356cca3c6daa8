import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, jwtVerify, type JSONWebKeySet } from 'jose';
import type { AuthConfig } from '../config/index.ts';
import { isScopeName, type Principal, type ScopeName } from './principal.ts';

const JWKS_TIMEOUT_MS = 5_000;
const JWKS_MAX_BYTES = 256 * 1024;

/** `fetch` that fails once the response body passes `maxBytes` (the JWKS endpoint is trusted, its size is not). */
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
 * Bearer JSON Web Tokens: accepted when signed by a key of the set with one of `algorithms`, `iss`, `aud`, `exp` and
 * `nbf` holding (jose's checks), and carrying a subject of 1–128 characters without NUL; `undefined` otherwise.
 * The principal is `jwt:<subject>`. `jwksFile` is read at creation (a bad file throws); `jwksUrl` is fetched on
 * first use and on an unknown `kid` (at most once per `jwksCooldownMs`), bounded in time and size.
 */
export function createJwtVerifier(
  config: NonNullable<AuthConfig['jwt']>,
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
    // Not a compact JWS (a wrong key, most likely): no verification attempted.
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
