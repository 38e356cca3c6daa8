/** Principals and scopes: who a request acts for, resolved from its bearer credential. */
export * from './principal.ts';
export { createPrincipals, fixedPrincipals, type AuthInput, type Principals } from './principals.ts';
export { createKeyTable } from './keys.ts';
export { scopesOf } from './jwt.ts';
export {
  checkOwnerNamed,
  LOCAL_SESSIONS,
  sessionAccess,
  sessionIdOf,
  sessionNotFound,
  type SessionAccess,
} from './ownership.ts';
