/** Principals and scopes (issue 23): who a request acts for, resolved from its bearer credential. */
export * from './principal.ts';
export { createPrincipals, type AuthInput, type Principals, type PrincipalsOptions } from './principals.ts';
export { createKeyTable, type KeyEntry } from './keys.ts';
export { createJwtVerifier, scopesOf, JWKS_MAX_BYTES, JWKS_TIMEOUT_MS } from './jwt.ts';
