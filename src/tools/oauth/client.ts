/**
 * OAuth 2.1 for one `http` tool server (docs/tool-servers.md; SECURITY.md "OAuth tokens"): the SDK's provider
 * (provider.ts) over one secret-store record (record.ts).
 * - One record per server (or per server and principal, `oauth.per: principal`), read at each connection attempt,
 *   so tokens another instance stored are used.
 * - `authorization_code`: an attempt without usable tokens leaves a pending sign-in (PENDING_TTL_MS, kept across
 *   retries and instances) and `blocked()` is AuthorizationRequired; `complete` checks the state in constant time.
 * - A principal's sign-in is bound to the caller that began it: `bind` hands that caller a new one-time value (only
 *   its digest is stored, replacing any earlier one) and `complete` needs it, else UnboundSignIn and nothing is sent.
 * - After `oauth.maxSignIns` completed sign-ins in a row: SignInRefused until `resetSignIns()`; `succeeded()` ends the row.
 * - Tokens are refreshed ahead of expiry (refresh.ts). Nothing here logs a token, code, verifier, secret or key.
 */
import { randomBytes } from 'node:crypto';
import { auth, UnauthorizedError } from '@modelcontextprotocol/client';
import { createProvider, type OAuthHeld, type ServerOAuthOptions } from './provider.ts';
import { digestOf, PENDING_TTL_MS, recordFile, recordKey, sameText, scopeOfUrl } from './record.ts';
import { createRefresher } from './refresh.ts';
import { AuthorizationRequired, SignInRefused, UnboundSignIn, UnknownSignIn } from './sign-in-errors.ts';
import { messageOf } from '../../errors/index.ts';

const MAX_SKEW_MS = 60_000;

export type ServerOAuth = ReturnType<typeof createServerOAuth>;

export function createServerOAuth(options: ServerOAuthOptions) {
  const { serverId, config, store, clock, log, principal } = options;
  const oauth = config.oauth;
  const serverUrl = config.baseUrl;
  const key = recordKey(serverId, serverUrl, principal);
  const file = recordFile(store, key, serverUrl);
  const interactive = oauth.grant === 'authorization_code';
  const held: OAuthHeld = { record: { serverUrl }, draft: {}, needsSignIn: false, completing: false };

  const save = () => file.write(held.record);
  const pendingFresh = () =>
    held.record.pending !== undefined && clock.now() - held.record.pending.createdAt < PENDING_TTL_MS;
  const authOptions = (extra: { authorizationCode?: string; iss?: string } = {}) => ({
    serverUrl,
    ...extra,
    ...(options.fetch && { fetchFn: options.fetch }),
  });

  /** Less than min(60 s, half the lifetime) left; tokens without `expires_in` never count as expiring. */
  const expiring = (): boolean => {
    const t = held.record.tokens;
    if (t?.expires_in === undefined) return false;
    const lifetime = t.expires_in * 1000;
    return t.obtainedAt + lifetime - clock.now() < Math.min(MAX_SKEW_MS, lifetime / 2);
  };
  /** Tokens another instance stored meanwhile replace ours (a rotated refresh token is good once). */
  const adoptStoredTokens = async (): Promise<boolean> => {
    const tokens = (await file.read())?.tokens;
    if (!tokens || tokens.access_token === held.record.tokens?.access_token) return false;
    held.record.tokens = tokens;
    return true;
  };
  const refresher = createRefresher({
    store,
    key,
    clock,
    log,
    expiring,
    adopt: adoptStoredTokens,
    possible: () => !interactive || held.record.tokens?.refresh_token !== undefined,
    refresh: async () => (await auth(provider, authOptions())) === 'AUTHORIZED',
  });

  const provider = createProvider(held, options, { save, pendingFresh, adoptStoredTokens, refresher });

  return {
    provider,
    /** Reads the server's record (at each connection attempt). */
    async load(): Promise<void> {
      held.needsSignIn = false;
      held.refused = undefined;
      held.record = (await file.read()) ?? { serverUrl };
    },
    /** After a failed attempt: the error that explains it when it failed for want of a sign-in, or none is offered. */
    blocked: (): AuthorizationRequired | SignInRefused | undefined =>
      held.refused ?? (held.needsSignIn ? new AuthorizationRequired(serverId, principal) : undefined),
    /** What a failed request means in OAuth terms (a sign-in is needed, or refused), for a person; else `undefined`. */
    explain(error: unknown): string | undefined {
      if (error instanceof SignInRefused) return error.message;
      if (!(error instanceof UnauthorizedError)) return undefined;
      if (held.refused) return held.refused.message;
      const scope = held.record.pending ? scopeOfUrl(held.record.pending.url) : undefined;
      return `${new AuthorizationRequired(serverId, principal).message}${scope ? ` (the server asks for scope "${scope}")` : ''}`;
    },
    /** The URL an admin signs in at, while an authorization is pending. */
    authorizationUrl: () => (pendingFresh() ? held.record.pending?.url : undefined),
    /** While a sign-in is pending: a new value that binds it to whoever receives it (the state it binds, and it). */
    async bind(): Promise<{ state: string; value: string } | undefined> {
      const pending = pendingFresh() ? held.record.pending : undefined;
      if (!pending) return undefined;
      const value = randomBytes(32).toString('base64url');
      pending.binding = digestOf(value);
      await save();
      return { state: pending.state, value };
    },
    /**
     * Exchanges the code of the sign-in `state` names (checked here); the SDK's `auth()` checks `iss` (RFC 9207).
     * A principal's sign-in needs `binding`, the value `bind` gave the caller that began it.
     */
    async complete(state: string, code: string, iss?: string, binding?: string): Promise<void> {
      await this.load();
      const pending = held.record.pending;
      if (!pending || !pendingFresh() || !sameText(pending.state, state)) throw new UnknownSignIn();
      if (principal !== undefined && !(pending.binding && binding && sameText(pending.binding, digestOf(binding))))
        throw new UnboundSignIn(principal);
      held.completing = true;
      held.askedScope = scopeOfUrl(pending.url);
      try {
        const result = await auth(
          provider,
          authOptions({ authorizationCode: code, ...(iss !== undefined && { iss }) }),
        );
        if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
      } finally {
        held.completing = false;
      }
      delete held.record.pending;
      held.record.signIns = (held.record.signIns ?? 0) + 1;
      await save();
    },
    /** A request authorized with our tokens succeeded: the row of sign-ins ends. */
    succeeded(): void {
      if (held.record.signIns === undefined) return;
      delete held.record.signIns;
      void save().catch((err: unknown) => log.warn({ reason: messageOf(err) }, 'OAuth: the record could not be saved'));
    },
    /** Sign-ins are offered again (a restart; a principal's own request for one). */
    async resetSignIns(): Promise<void> {
      await this.load();
      if (held.record.signIns === undefined) return;
      delete held.record.signIns;
      await save();
    },
    /** Tokens are held (after `load`). */
    signedIn: () => held.record.tokens !== undefined,
    /** Drops the record: tokens, registration and pending sign-in (a principal signs out). */
    async forget(): Promise<void> {
      held.record = { serverUrl };
      await file.remove();
    },
  };
}
