/** Who a request acts for: resolved once per request or WebSocket connection; logs show its name, never the credential. */
import { AUTH_SCOPES } from '../config/index.ts';

/** `chat`: messages, sessions, approvals. `inspect`: /inspect/ws, /metrics, /api/config.yaml. `admin`: everything. */
export type ScopeName = (typeof AUTH_SCOPES)[number];

export interface Principal {
  /** A key's name, `jwt:<subject>` for a token, `anonymous` without a credential. */
  name: string;
  scopes: ReadonlySet<ScopeName>;
  via: 'key' | 'jwt' | 'anonymous';
  /** Whose sessions it uses: its own name for a named key or a token; none (the unnamed namespace) for `anonymous` and shorthand keys. */
  owner: string | undefined;
}

/** What a route or socket needs: `approve` (answering one's own approvals) is `chat`, or `admin` when only the shorthand keys are configured and `adminKey` is one of them. */
export type RouteScope = 'public' | ScopeName | 'approve';

/** `admin` implies every scope. */
export const hasScope = (principal: Principal, scope: ScopeName): boolean =>
  principal.scopes.has('admin') || principal.scopes.has(scope);

export const ALL_SCOPES: ReadonlySet<ScopeName> = new Set(AUTH_SCOPES);

export const isScopeName = (value: unknown): value is ScopeName =>
  typeof value === 'string' && (AUTH_SCOPES as readonly string[]).includes(value);

/**
 * What carried an answer (`by`: `rest`, `websocket`, ...) and who gave it: a signed-in caller's name, none for
 * `anonymous`; and whether it is an admin (who alone may answer budget questions by default).
 */
export const answeredVia = (
  by: string,
  principal: Principal,
): { by: string; principal: string | undefined; admin: boolean } => ({
  by,
  principal: principal.via === 'anonymous' ? undefined : principal.name,
  admin: hasScope(principal, 'admin'),
});
