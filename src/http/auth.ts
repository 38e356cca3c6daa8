export type { Principal, Principals, RouteScope, SessionAccess } from '../auth/index.ts';

/** The credential of `Authorization: Bearer <credential>`, the scheme in any case (RFC 9110 §11.1). */
export function bearerKey(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^bearer +(\S+)$/i.exec(header);
  return match?.[1];
}

/** A WebSocket upgrade's credential: the Bearer header, else `?token=` (browsers cannot set headers on an upgrade). */
export const upgradeCredential = (authorization: string, query: URLSearchParams): string | undefined =>
  bearerKey(authorization || undefined) ?? (query.get('token') || undefined);
