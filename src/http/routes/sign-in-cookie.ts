/**
 * The cookie that binds a principal's OAuth sign-in to the browser that began it (SECURITY.md, "OAuth tokens"): the
 * answer to that principal's own `POST …/sign-in` sets it, the callback needs it. One per sign-in (named by a digest
 * of its state, so sign-ins to several servers do not meet), HttpOnly, `SameSite=Lax` (sent on the provider's
 * redirect back, a top-level GET), scoped to the callback's path, gone after the sign-in's 10 minutes or its callback.
 */
import { createHash } from 'node:crypto';

const PATH = '/api/oauth/callback';
const MAX_AGE_S = 600;

export const signInCookieName = (state: string) =>
  `agentd-sign-in-${createHash('sha256').update(state).digest('hex').slice(0, 16)}`;

/** `Set-Cookie` binding the sign-in `state` names to whoever receives it. */
export const signInCookie = (binding: { state: string; value: string }) =>
  `${signInCookieName(binding.state)}=${binding.value}; Path=${PATH}; Max-Age=${MAX_AGE_S}; HttpOnly; SameSite=Lax`;

/** `Set-Cookie` removing that cookie (the callback used it, or refused it). */
export const clearedSignInCookie = (state: string) =>
  `${signInCookieName(state)}=; Path=${PATH}; Max-Age=0; HttpOnly; SameSite=Lax`;

/** The value of the sign-in cookie for `state` in a `Cookie` header (undefined without one). */
export function signInCookieOf(cookieHeader: string | undefined, state: string): string | undefined {
  const name = signInCookieName(state);
  for (const pair of (cookieHeader ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}
