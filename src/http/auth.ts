/**
 * The front end's side of principals (src/auth): the bearer credential of a request, and the
 * resolver every front uses (REST, WebSocket, /mcp, the inspector) through the admission chain.
 */
import { createPrincipals, type AuthInput, type Principals, type PrincipalsOptions } from '../auth/index.ts';

export type { Principal, RouteScope } from '../auth/index.ts';

/** The credential of an `Authorization: Bearer <credential>` header; anything else carries none. */
export function bearerKey(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer (\S+)$/.exec(header);
  return match?.[1];
}

/** Principals of `server.auth` (keys, shorthands, JWT); see src/auth/principals.ts for the contracts. */
export const createAuth = (auth: AuthInput, options?: PrincipalsOptions): Principals => createPrincipals(auth, options);
export type Auth = Principals;
