/**
 * OAuth 2.1 for one `http` tool server: the SDK's `OAuthClientProvider`, backed by the secret store, plus what
 * the MCP service needs around it (docs/tool-servers.md, "OAuth-protected tool servers"; SECURITY.md "OAuth tokens").
 *
 * Contracts:
 * - The SDK's transport drives the flow (`auth()` on a 401, and on a 403 `insufficient_scope` with the union of the
 *   scopes held and asked for): discovery (RFC 9728, RFC 8414; fresh at every new authorization, so a server that
 *   moved to another authorization server gets a new registration there, SEP-2352), client ID metadata documents
 *   (`oauth.clientMetadataUrl`), dynamic client registration (RFC 7591, oauth-identity.ts) unless `oauth.clientId`
 *   is configured, PKCE (S256), the resource indicator (RFC 8707), refresh, the client-credentials grant and
 *   `private_key_jwt`. Discovery passes oauth-policy.ts before anything is sent; `iss` (RFC 9207) is checked by `auth()`.
 * - One record per server, or per server and principal with `oauth.per: principal` (oauth-record.ts), read at each
 *   connection attempt, so tokens another instance stored (Redis) are used. Granted scopes are kept with the tokens (what was asked for when the answer names none), so
 *   a step-up asks for them again besides the new one.
 * - `authorization_code`: an attempt without usable tokens leaves a pending authorization (state, PKCE verifier,
 *   URL, and what discovery found, so any instance completes it with that authorization server; valid for
 *   PENDING_TTL_MS) and fails with `AuthorizationRequired`. A fresh pending authorization is kept, never replaced,
 *   so the URL an admin follows stays valid across retries and instances. `complete(state, code)` checks the state
 *   (constant time), exchanges the code, stores the tokens and drops the pending authorization.
 * - Sign-ins in a row are counted; once `oauth.maxSignIns` of them were completed and the server still asks for
 *   another, none is offered: the attempt fails with `SignInRefused` until `resetSignIns()` (a restart; for a
 *   principal, its own request for a sign-in). A connection or a tool call that succeeds (`succeeded()`) ends the row.
 * - Tokens are refreshed before they expire (oauth-refresh.ts: one instance at a time): when a request finds less
 *   than min(60 s, half their lifetime) left, the refresh-token grant (client credentials: a new token) runs first.
 *   Before dropping refused tokens, tokens another instance stored meanwhile are adopted instead.
 * - Nothing here logs a token, a code, a verifier, a secret or a key.
 */
import { randomBytes } from 'node:crypto';
import {
  auth,
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/client';
import type { Clock } from '../../clock.ts';
import type { HttpServerConfig, OAuthConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import type { SecretStore } from '../../store/secret-store.ts';
import { clientMetadataOf, privateKeyJwt } from './identity.ts';
import { checkDiscovery } from './policy.ts';
import { PENDING_TTL_MS, recordFile, recordKey, sameText, scopeOfUrl, stateOf, type OAuthRecord } from './record.ts';
import { createRefresher } from './refresh.ts';
import type { FetchLike } from '../spawn/url-policy.ts';

export { PENDING_TTL_MS, principalOfState, serverOfState } from './record.ts';
export { REFRESH_LEASE_MS } from './refresh.ts';

const MAX_SKEW_MS = 60_000;

/** The connection attempt needs a person to sign in (the machine stops retrying until the callback restarts it). */
export class AuthorizationRequired extends Error {
  override readonly name = 'AuthorizationRequired';
  constructor(
    readonly serverId: string,
    principal?: string,
  ) {
    super(
      principal === undefined
        ? "authorization required: an admin signs in at the authorizationUrl of this server's record"
        : `authorization required: ${principal === '' ? 'this principal' : `principal "${principal}"`} is not signed in to this server; each principal signs in for itself at POST /api/mcp/servers/${encodeURIComponent(serverId)}/sign-in (or in the console)`,
    );
  }
}

/** `oauth.maxSignIns` sign-ins in a row did not satisfy the server: no further one is offered until a restart. */
export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
  constructor(signIns: number, scope: string | undefined, principal?: string) {
    const until =
      principal === undefined ? 'the server is restarted' : 'the principal asks for one again (POST …/sign-in)';
    super(
      `the server still refuses access after ${signIns} sign-in${signIns === 1 ? '' : 's'} in a row${scope ? ` (it asks for scope "${scope}")` : ''}: no further sign-in is offered until ${until}`,
    );
  }
}

/** The callback's state names no pending sign-in of the server (expired, used, or replaced). */
export class UnknownSignIn extends Error {
  override readonly name = 'UnknownSignIn';
  constructor() {
    super('No sign-in is pending with this state (it expired, was used, or was replaced)');
  }
}

export interface ServerOAuthOptions {
  serverId: string;
  config: HttpServerConfig & { oauth: OAuthConfig };
  store: SecretStore;
  clock: Clock;
  log: Logger;
  /** agentd's callback URL (`/api/oauth/callback` where it listens), unless the config sets `redirectUrl`. */
  callbackUrl: () => string;
  fetch?: FetchLike;
  /** With `oauth.per: principal`: the principal (its session owner; `''` the unnamed one) whose record this is. */
  principal?: string;
}

export interface ServerOAuth {
  readonly provider: OAuthClientProvider;
  /** Reads the server's record (at each connection attempt). */
  load(): Promise<void>;
  /** After a failed attempt: the error that explains it when it failed for want of a sign-in, or none is offered. */
  blocked(): AuthorizationRequired | SignInRefused | undefined;
  /** What a failed request means in OAuth terms (a sign-in is needed, or refused), for a person; else `undefined`. */
  explain(error: unknown): string | undefined;
  /** The URL an admin signs in at, while an authorization is pending. */
  authorizationUrl(): string | undefined;
  /** Exchanges the code of the sign-in `state` names (checked here); `iss` (RFC 9207) is checked by the SDK's `auth()`. */
  complete(state: string, code: string, iss?: string): Promise<void>;
  /** A request authorized with our tokens succeeded: the row of sign-ins ends. */
  succeeded(): void;
  /** Sign-ins are offered again (a restart; a principal's own request for one). */
  resetSignIns(): Promise<void>;
  /** Tokens are held (after `load`). */
  signedIn(): boolean;
  /** Drops the record: tokens, registration and pending sign-in (a principal signs out). */
  forget(): Promise<void>;
}

export function createServerOAuth(options: ServerOAuthOptions): ServerOAuth {
  const { serverId, config, store, clock, log, principal } = options;
  const oauth = config.oauth;
  const serverUrl = config.baseUrl;
  const key = recordKey(serverId, serverUrl, principal);
  const file = recordFile(store, key, serverUrl);
  const interactive = oauth.grant === 'authorization_code';
  const jwtAuth = privateKeyJwt(oauth);
  let record: OAuthRecord = { serverUrl };
  let discovery: OAuthDiscoveryState | undefined;
  let draft: { state?: string; codeVerifier?: string } = {};
  let needsSignIn = false;
  let refused: SignInRefused | undefined;
  /** Set while completing a sign-in: its code goes to the authorization server the sign-in began with. */
  let completing = false;
  /** The scope of the token request under way (kept as granted when the answer names none). */
  let askedScope: string | undefined;

  const save = () => file.write(record);
  const redirectUrl = () => oauth.redirectUrl ?? options.callbackUrl();
  const pendingFresh = () => record.pending !== undefined && clock.now() - record.pending.createdAt < PENDING_TTL_MS;
  const configuredClient = () =>
    oauth.clientId === undefined
      ? undefined
      : { client_id: oauth.clientId, ...(oauth.clientSecret !== undefined && { client_secret: oauth.clientSecret }) };
  const authOptions = (extra: { authorizationCode?: string; iss?: string } = {}) => ({
    serverUrl,
    ...extra,
    ...(options.fetch && { fetchFn: options.fetch }),
  });

  /** Less than min(60 s, half the lifetime) left; tokens without `expires_in` never count as expiring. */
  const expiring = (): boolean => {
    const t = record.tokens;
    if (t?.expires_in === undefined) return false;
    const lifetime = t.expires_in * 1000;
    return t.obtainedAt + lifetime - clock.now() < Math.min(MAX_SKEW_MS, lifetime / 2);
  };
  /** Tokens another instance stored meanwhile replace ours (a rotated refresh token is good once). */
  const adoptStoredTokens = async (): Promise<boolean> => {
    const tokens = (await file.read())?.tokens;
    if (!tokens || tokens.access_token === record.tokens?.access_token) return false;
    record.tokens = tokens;
    return true;
  };
  const refresher = createRefresher({
    store,
    key,
    clock,
    log,
    expiring,
    adopt: adoptStoredTokens,
    possible: () => !interactive || record.tokens?.refresh_token !== undefined,
    refresh: async () => (await auth(provider, authOptions())) === 'AUTHORIZED',
  });

  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return interactive ? redirectUrl() : undefined;
    },
    get clientMetadata() {
      return clientMetadataOf(oauth, interactive ? redirectUrl() : undefined);
    },
    ...(oauth.clientMetadataUrl !== undefined && { clientMetadataUrl: oauth.clientMetadataUrl }),
    ...(jwtAuth && { addClientAuthentication: jwtAuth }),
    state() {
      draft.state = stateOf(randomBytes(24).toString('base64url'), serverId, principal);
      return draft.state;
    },
    clientInformation() {
      const configured = configuredClient();
      if (configured) return configured;
      const client = record.client;
      // A registration made for another callback URL (agentd moved) cannot complete a new sign-in: register again;
      // while a refresh token is held it stays, for the refresh token is bound to it.
      const moved = client && interactive && 'redirect_uris' in client && !client.redirect_uris.includes(redirectUrl());
      if (moved && !record.tokens?.refresh_token) return undefined;
      return client;
    },
    async saveClientInformation(info) {
      if (configuredClient()) return;
      record.client = info;
      await save();
    },
    async tokens() {
      if (!refresher.running) await refresher.refreshAhead();
      return record.tokens;
    },
    async saveTokens(tokens) {
      record.tokens = { ...tokens, scope: tokens.scope ?? askedScope ?? record.tokens?.scope, obtainedAt: clock.now() };
      askedScope = undefined;
      await save();
    },
    saveCodeVerifier(codeVerifier) {
      draft.codeVerifier = codeVerifier;
    },
    codeVerifier() {
      const verifier = record.pending?.codeVerifier;
      if (verifier === undefined) throw new Error('no authorization is pending');
      return verifier;
    },
    async redirectToAuthorization(url) {
      if (pendingFresh()) return void (needsSignIn = true); // keep the URL an admin may be following
      const signIns = record.signIns ?? 0;
      if (signIns >= oauth.maxSignIns) {
        refused = new SignInRefused(signIns, scopeOfUrl(url.href), principal);
        throw refused;
      }
      needsSignIn = true;
      if (draft.state === undefined || draft.codeVerifier === undefined)
        throw new Error('authorization started without state or verifier');
      record.pending = {
        state: draft.state,
        codeVerifier: draft.codeVerifier,
        url: url.href,
        createdAt: clock.now(),
        discovery,
      };
      draft = {};
      await save();
      log.info(
        principal === undefined
          ? "OAuth: authorization required; an admin signs in at the server record's authorizationUrl"
          : "OAuth: a principal's sign-in began",
      );
    },
    async invalidateCredentials(scope) {
      // Refused tokens that another instance has replaced meanwhile: take its tokens instead of dropping them.
      if (scope === 'tokens' && (await adoptStoredTokens())) return;
      if (scope === 'all' || scope === 'client') delete record.client;
      if (scope === 'all' || scope === 'tokens') delete record.tokens;
      if (scope === 'all' || scope === 'verifier') delete record.pending;
      if (scope === 'all' || scope === 'discovery') discovery = undefined;
      if ((scope === 'all' || scope === 'discovery') && record.pending) delete record.pending.discovery;
      await save();
    },
    saveDiscoveryState(state) {
      checkDiscovery(serverUrl, state);
      discovery = state;
    },
    discoveryState() {
      // Only the code of a sign-in reuses what was found (any instance may complete it): anything else discovers anew.
      return completing ? record.pending?.discovery : undefined;
    },
    prepareTokenRequest(scope) {
      if (!completing) askedScope = scope;
      if (interactive) return undefined;
      return new URLSearchParams({ grant_type: 'client_credentials', ...(scope && { scope }) });
    },
  };

  return {
    provider,
    async load() {
      needsSignIn = false;
      refused = undefined;
      record = (await file.read()) ?? { serverUrl };
    },
    blocked: () => refused ?? (needsSignIn ? new AuthorizationRequired(serverId, principal) : undefined),
    explain(error) {
      if (error instanceof SignInRefused) return error.message;
      if (!(error instanceof UnauthorizedError)) return undefined;
      if (refused) return refused.message;
      const scope = record.pending ? scopeOfUrl(record.pending.url) : undefined;
      return `${new AuthorizationRequired(serverId, principal).message}${scope ? ` (the server asks for scope "${scope}")` : ''}`;
    },
    authorizationUrl: () => (pendingFresh() ? record.pending?.url : undefined),
    async complete(state, code, iss) {
      await this.load();
      const pending = record.pending;
      if (!pending || !pendingFresh() || !sameText(pending.state, state)) {
        throw new UnknownSignIn();
      }
      completing = true;
      askedScope = scopeOfUrl(pending.url);
      try {
        const result = await auth(
          provider,
          authOptions({ authorizationCode: code, ...(iss !== undefined && { iss }) }),
        );
        if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
      } finally {
        completing = false;
      }
      delete record.pending;
      record.signIns = (record.signIns ?? 0) + 1;
      await save();
    },
    succeeded() {
      if (record.signIns === undefined) return;
      delete record.signIns;
      void save().catch((err: unknown) =>
        log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'OAuth: the record could not be saved'),
      );
    },
    async resetSignIns() {
      await this.load();
      if (record.signIns === undefined) return;
      delete record.signIns;
      await save();
    },
    signedIn: () => record.tokens !== undefined,
    async forget() {
      record = { serverUrl };
      await file.remove();
    },
  };
}
