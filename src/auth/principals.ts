import { AppError } from '../errors/index.ts';
import type { AuthConfig } from '../config/index.ts';
import { createJwtVerifier } from './jwt.ts';
import { createKeyTable, keyPrincipal, type KeyEntry } from './keys.ts';
import { ALL_SCOPES, hasScope, type Principal, type RouteScope, type ScopeName } from './principal.ts';

/** `server.auth` as configured; `keys` and `jwt` may be left out (tests, older callers). */
export type AuthInput = Pick<AuthConfig, 'apiKey' | 'adminKey'> & Partial<Pick<AuthConfig, 'keys' | 'jwt'>>;

export type Principals = ReturnType<typeof createPrincipals>;

/** What a configuration fixes before any credential is seen; the one source of these rules for `createPrincipals` and the OpenAPI document. */
export function fixedPrincipals(auth: AuthInput) {
  const named = auth.keys ?? [];
  const onlyShorthands = named.length === 0 && auth.jwt === undefined;
  const onlyAdminKey = auth.adminKey !== undefined && auth.apiKey === undefined && onlyShorthands;
  const shorthand = (name: 'api' | 'admin', key: string | undefined, scopes: ScopeName[]): KeyEntry[] =>
    key === undefined ? [] : [{ name, key, scopes, owner: undefined }];
  const shorthands = [...shorthand('api', auth.apiKey, ['chat']), ...shorthand('admin', auth.adminKey, ['admin'])];
  const configured = shorthands.length + named.length > 0 || auth.jwt !== undefined;
  const anonymous: Principal = {
    name: 'anonymous',
    scopes: !configured ? ALL_SCOPES : onlyAdminKey ? new Set<ScopeName>(['chat']) : new Set<ScopeName>(),
    via: 'anonymous',
    owner: undefined,
  };
  const approveScope: ScopeName = onlyShorthands && auth.adminKey !== undefined ? 'admin' : 'chat';
  const need = (needed: RouteScope): ScopeName | undefined =>
    needed === 'public' ? undefined : needed === 'approve' ? approveScope : needed;
  const allows = (p: Principal, needed: RouteScope): boolean => {
    const scope = need(needed);
    return scope === undefined || hasScope(p, scope);
  };
  const principalOf = (e: KeyEntry | undefined): Principal | undefined => e && keyPrincipal(e);
  return {
    named,
    onlyShorthands,
    shorthands,
    configured,
    anonymous,
    /** The `apiKey` shorthand's principal, if configured. */
    api: principalOf(shorthands.find((s) => s.name === 'api')),
    /** The `adminKey` shorthand's principal, if configured. */
    admin: principalOf(shorthands.find((s) => s.name === 'admin')),
    /** Named keys or a JWT configured. */
    bearer: named.length > 0 || auth.jwt !== undefined,
    need,
    allows,
  };
}

/**
 * Principals from `server.auth`: each of `keys` owns the sessions of its name; `apiKey` (`api`, scope `chat`) and
 * `adminKey` (`admin`, scope `admin`) use the unnamed namespace. `anonymous` has every scope when nothing is
 * configured, `chat` when only `adminKey` is, else none; a credential that resolves to nobody counts as none.
 * Refusals: 401 UNAUTHORIZED for no or an unknown credential (and a shorthand key short of a scope while only
 * shorthands are configured with `adminKey`), else 403 FORBIDDEN naming scope and principal. `public` resolves nothing.
 * `onJwksError` is told when the key set cannot be fetched or read (not for refused tokens).
 */
export function createPrincipals(auth: AuthInput, options: { onJwksError?: (err: unknown) => void } = {}) {
  const { named, onlyShorthands, shorthands, configured, anonymous, need, allows } = fixedPrincipals(auth);
  const keyOf = createKeyTable([...shorthands, ...named.map((k) => ({ ...k, owner: k.name }))]);
  const tokenOf = auth.jwt ? createJwtVerifier(auth.jwt, options.onJwksError) : undefined;
  // The shorthand keys keep their 401 when `adminKey` is the key that would do.
  const legacy = (p: Principal) =>
    p.via === 'key' && onlyShorthands && auth.adminKey !== undefined && shorthands.some((s) => s.name === p.name);

  /** The principal of a bearer credential: a key's, a token's, or `undefined` for neither. */
  const resolve = async (credential: string): Promise<Principal | undefined> =>
    keyOf(credential) ?? (tokenOf ? await tokenOf(credential) : undefined);

  const unauthorized = (scope: ScopeName): AppError =>
    scope !== 'chat' && auth.adminKey !== undefined && onlyShorthands
      ? new AppError('UNAUTHORIZED', 'This operation needs the admin key', {
          scope,
          suggestion: 'send Authorization: Bearer <server.auth.adminKey>',
        })
      : new AppError(
          'UNAUTHORIZED',
          auth.apiKey !== undefined && onlyShorthands ? 'Missing or invalid API key' : 'Missing or invalid credential',
          {
            scope: scope === 'chat' && onlyShorthands ? 'client' : scope, // `client`: today's name of chat
            suggestion:
              auth.apiKey !== undefined
                ? 'send Authorization: Bearer <server.auth.apiKey>'
                : 'send Authorization: Bearer <a key or token>',
          },
        );

  /** Throws what `authorize` would when `principal` may not do what `needed` says (for a connection's later acts). */
  const check = (principal: Principal, needed: RouteScope): void => {
    const scope = need(needed);
    if (scope === undefined || hasScope(principal, scope)) return;
    if (principal.via === 'anonymous' || legacy(principal)) throw unauthorized(scope);
    throw new AppError('FORBIDDEN', `The principal "${principal.name}" lacks the ${scope} scope`, {
      scope,
      principal: principal.name,
    });
  };

  return {
    /** True when any key or JWT is configured. */
    configured,
    check,
    /** The principal of a request without a credential (or with one that resolves to nobody). */
    anonymous,
    resolve,
    /** Whether a principal may do what `needed` says (`approve` and `admin` implication included). */
    allows,
    /** The principal a request acts for, checked against what it needs (the refusals above). */
    async authorize(credential: string | undefined, needed: RouteScope = 'chat'): Promise<Principal> {
      const scope = need(needed);
      if (scope === undefined) return anonymous;
      if (hasScope(anonymous, scope) && !configured) return anonymous;
      const principal = credential === undefined ? undefined : await resolve(credential);
      if (principal === undefined) {
        if (hasScope(anonymous, scope)) return anonymous;
        throw unauthorized(scope);
      }
      check(principal, needed);
      return principal;
    },
  };
}
