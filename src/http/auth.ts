/**
 * The front end's side of principals (src/auth): where a request carries its bearer credential.
 * The resolver itself is src/auth's `createPrincipals`, used through the admission chain.
 */
export type { Principal, Principals, RouteScope, SessionAccess } from '../auth/index.ts';

/**
 * The credential of an `Authorization: Bearer <credential>` header, the scheme in any case (`bearer`,
 * `BEARER`: RFC 9110 §11.1); anything else carries none.
 */
export function bearerKey(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^bearer +(\S+)$/i.exec(header);
  return match?.[1];
}

/** A WebSocket upgrade's credential: the Bearer header, else `?token=` (browsers cannot set headers on an upgrade). */
export const upgradeCredential = (authorization: string, query: URLSearchParams): string | undefined =>
  bearerKey(authorization || undefined) ?? (query.get('token') || undefined);
