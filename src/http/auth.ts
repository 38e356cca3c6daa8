export type { Principal, Principals, RouteScope, SessionAccess } from '../auth/index.ts';

/** The credential of `Authorization: Bearer <credential>`, the scheme in any case (RFC 9110 §11.1). */
export function bearerKey(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^bearer +(\S+)$/i.exec(header);
  return match?.[1];
}
