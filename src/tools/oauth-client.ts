/**
 * OAuth 2.1 for one `http` tool server: the SDK's `OAuthClientProvider`, backed by the secret store, plus what
 * the MCP service needs around it (docs/tool-servers.md, "OAuth-protected tool servers"; SECURITY.md "OAuth tokens").
 *
 * Contracts:
 * - The SDK's transport drives the flow (`auth()` on a 401): discovery (RFC 9728, RFC 8414), dynamic client
 *   registration (RFC 7591) unless `oauth.clientId` is configured, PKCE (S256), the resource indicator (RFC
 *   8707), refresh, and the client-credentials grant. Discovery passes oauth-policy.ts before anything is sent:
 *   a refused server fails the attempt with the policy's reason.
 * - One record per server (key: a hash of its name and URL) holds its registration, tokens and the pending
 *   authorization; it is read at each connection attempt, so tokens another instance stored (Redis) are used.
 * - `authorization_code`: an attempt without usable tokens leaves a pending authorization (state, PKCE verifier,
 *   URL, and what discovery found, so any instance completes it with that authorization server; valid for
 *   PENDING_TTL_MS) and fails with `AuthorizationRequired`. A fresh pending authorization is kept,
 *   never replaced, so the URL an admin follows stays valid across retries and instances. `complete(state, code)`
 *   checks the state (constant time), exchanges the code, stores the tokens and drops the pending authorization.
 * - Tokens are refreshed before they expire: when a request finds less than min(60 s, half their lifetime)
 *   left, the refresh-token grant (client credentials: a new token) runs first; a failed refresh is retried at
 *   most once per REFRESH_COOLDOWN_MS, and the request goes on with the old token (a 401 then re-runs `auth()`).
 * - Instances sharing the store share tokens: before refreshing, and before dropping refused tokens, tokens another
 *   instance stored meanwhile are adopted instead. A refresh runs under the store's lease `<record key>-refresh`
 *   (REFRESH_LEASE_MS), so of the instances that find the same tokens expiring only one sends the refresh grant
 *   (a rotated refresh token is good once); the others wait, re-reading the record every REFRESH_POLL_MS, and
 *   adopt its new tokens, or refresh themselves once the lease is free again (its holder failed or died). A store
 *   that cannot take the lease is logged and the refresh runs without it.
 * - Nothing here logs a token, a code, a verifier or a secret.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { auth, type OAuthClientInformationMixed, type OAuthClientMetadata, type OAuthClientProvider, type OAuthDiscoveryState, type OAuthTokens } from '@modelcontextprotocol/client';
import type { Clock } from '../clock.ts';
import type { HttpServerConfig, OAuthConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import type { Lease, SecretStore } from '../store/secret-store.ts';
import { checkDiscovery } from './oauth-policy.ts';
import type { FetchLike } from './url-policy.ts';

export const PENDING_TTL_MS = 10 * 60_000;
const REFRESH_COOLDOWN_MS = 5_000;
/** How long one instance's refresh may hold the others back (they then refresh themselves). */
export const REFRESH_LEASE_MS = 30_000;
const REFRESH_POLL_MS = 100;
const NO_LEASE: Lease = { release: () => Promise.resolve() };
const MAX_SKEW_MS = 60_000;

/** The connection attempt needs a person to sign in (the machine stops retrying until the callback restarts it). */
export class AuthorizationRequired extends Error {
  override readonly name = 'AuthorizationRequired';
  constructor(readonly serverId: string) {
    super('authorization required: an admin signs in at the authorizationUrl of this server\'s record');
  }
}

/** The callback's state names no pending sign-in of the server (expired, used, or replaced). */
export class UnknownSignIn extends Error {
  override readonly name = 'UnknownSignIn';
  constructor() {
    super('No sign-in is pending with this state (it expired, was used, or was replaced)');
  }
}

interface Pending {
  state: string;
  codeVerifier: string;
  url: string;
  createdAt: number;
  /** What discovery found when the sign-in began: the code is exchanged with that authorization server (SEP-2352). */
  discovery?: OAuthDiscoveryState | undefined;
}

/** What the secret store holds for one server. */
interface OAuthRecord {
  serverUrl: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens & { obtainedAt: number };
  pending?: Pending;
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
}

export interface ServerOAuth {
  readonly provider: OAuthClientProvider;
  /** Reads the server's record (at each connection attempt). */
  load(): Promise<void>;
  /** After a failed attempt: whether it failed for want of a sign-in. */
  signInRequired(): boolean;
  /** The URL an admin signs in at, while an authorization is pending. */
  authorizationUrl(): string | undefined;
  /** Exchanges the code of the sign-in `state` names (checked here); `iss` (RFC 9207) is checked by the SDK's `auth()`. */
  complete(state: string, code: string, iss?: string): Promise<void>;
}

/** The state parameter names its server (`<random>.<serverId>`), so any instance can find the pending authorization. */
export const serverOfState = (state: string): string | undefined => {
  const dot = state.indexOf('.');
  return dot > 0 ? state.slice(dot + 1) : undefined;
};

const recordKey = (serverId: string, url: string) => `oauth-${createHash('sha256').update(`${serverId}\n${url}`).digest('hex').slice(0, 40)}`;

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export function createServerOAuth(options: ServerOAuthOptions): ServerOAuth {
  const { serverId, config, store, clock, log } = options;
  const oauth = config.oauth;
  const serverUrl = config.baseUrl;
  const key = recordKey(serverId, serverUrl);
  const interactive = oauth.grant === 'authorization_code';
  let record: OAuthRecord = { serverUrl };
  let discovery: OAuthDiscoveryState | undefined;
  let draft: { state?: string; codeVerifier?: string } = {};
  let needsSignIn = false;
  let refreshing = false;
  let lastRefreshFailure = -Infinity;

  const save = () => store.set(key, JSON.stringify(record));
  const redirectUrl = () => oauth.redirectUrl ?? options.callbackUrl();
  const pendingFresh = () => record.pending !== undefined && clock.now() - record.pending.createdAt < PENDING_TTL_MS;
  const configuredClient = (): OAuthClientInformationMixed | undefined =>
    oauth.clientId === undefined ? undefined : { client_id: oauth.clientId, ...(oauth.clientSecret !== undefined && { client_secret: oauth.clientSecret }) };

  /** Less than min(60 s, half the lifetime) left; tokens without `expires_in` never count as expiring. */
  const expiring = (): boolean => {
    const t = record.tokens;
    if (t?.expires_in === undefined) return false;
    const lifetime = t.expires_in * 1000;
    return t.obtainedAt + lifetime - clock.now() < Math.min(MAX_SKEW_MS, lifetime / 2);
  };

  /** The stored record (another instance may have refreshed); `undefined` when there is none for this server. */
  const stored = async (): Promise<OAuthRecord | undefined> => {
    const text = await store.get(key);
    const parsed = text === undefined ? undefined : (JSON.parse(text) as OAuthRecord);
    return parsed?.serverUrl === serverUrl ? parsed : undefined;
  };
  /** Tokens another instance stored meanwhile replace ours (a rotated refresh token is good once). */
  const adoptStoredTokens = async (): Promise<boolean> => {
    const tokens = (await stored())?.tokens;
    if (!tokens || tokens.access_token === record.tokens?.access_token) return false;
    record.tokens = tokens;
    return true;
  };

  /** The refresh lease; `undefined` once another instance's refresh stored tokens to adopt (see the contracts). */
  const refreshLease = async (): Promise<Lease | undefined> => {
    const giveUp = Date.now() + REFRESH_LEASE_MS;
    for (;;) {
      const lease = await store.claim(`${key}-refresh`, REFRESH_LEASE_MS).catch((err: unknown) => {
        log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'OAuth: the refresh lease could not be taken; refreshing without it');
        return NO_LEASE;
      });
      if (lease || Date.now() > giveUp) return lease ?? NO_LEASE;
      await new Promise((resolve) => setTimeout(resolve, REFRESH_POLL_MS));
      if ((await adoptStoredTokens()) && !expiring()) return undefined;
    }
  };

  const refreshAhead = async (): Promise<void> => {
    if (refreshing || !expiring() || clock.now() - lastRefreshFailure < REFRESH_COOLDOWN_MS) return;
    if ((await adoptStoredTokens()) && !expiring()) return;
    if (interactive && !record.tokens?.refresh_token) return;
    refreshing = true;
    let lease: Lease | undefined;
    try {
      lease = await refreshLease();
      if (!lease) return log.debug('OAuth tokens refreshed by another instance');
      // The holder before us may have refreshed and released between our reads.
      if ((await adoptStoredTokens()) && !expiring()) return;
      const result = await auth(provider, { serverUrl, ...(options.fetch && { fetchFn: options.fetch }) });
      if (result !== 'AUTHORIZED') lastRefreshFailure = clock.now();
      else log.debug('OAuth tokens refreshed');
    } catch (err) {
      lastRefreshFailure = clock.now();
      log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'OAuth token refresh failed');
    } finally {
      refreshing = false;
      await lease?.release().catch((err: unknown) => log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'OAuth: the refresh lease could not be released; it expires by itself'));
    }
  };

  const clientMetadata = (): OAuthClientMetadata => ({
    client_name: 'agentd',
    redirect_uris: interactive ? [redirectUrl()] : [],
    grant_types: interactive ? ['authorization_code', 'refresh_token'] : ['client_credentials'],
    response_types: interactive ? ['code'] : [],
    token_endpoint_auth_method: oauth.clientSecret !== undefined ? 'client_secret_basic' : 'none',
    ...(oauth.scopes && { scope: oauth.scopes.join(' ') }),
  });

  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return interactive ? redirectUrl() : undefined;
    },
    get clientMetadata() {
      return clientMetadata();
    },
    state() {
      draft.state = `${randomBytes(24).toString('base64url')}.${serverId}`;
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
      if (!refreshing) await refreshAhead();
      return record.tokens;
    },
    async saveTokens(tokens) {
      record.tokens = { ...tokens, obtainedAt: clock.now() };
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
      needsSignIn = true;
      if (pendingFresh()) return; // keep the URL an admin may be following
      if (draft.state === undefined || draft.codeVerifier === undefined) throw new Error('authorization started without state or verifier');
      record.pending = { state: draft.state, codeVerifier: draft.codeVerifier, url: url.href, createdAt: clock.now(), discovery };
      draft = {};
      await save();
      log.info('OAuth: authorization required; an admin signs in at the server record\'s authorizationUrl');
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
      // The instance completing a sign-in may not be the one that began it (or may have restarted).
      return discovery ?? record.pending?.discovery;
    },
    prepareTokenRequest(scope) {
      if (interactive) return undefined;
      return new URLSearchParams({ grant_type: 'client_credentials', ...(scope && { scope }) });
    },
  };

  return {
    provider,
    async load() {
      needsSignIn = false;
      record = (await stored()) ?? { serverUrl };
    },
    signInRequired: () => needsSignIn,
    authorizationUrl: () => (pendingFresh() ? record.pending?.url : undefined),
    async complete(state, code, iss) {
      await this.load();
      const pending = record.pending;
      if (!pending || !pendingFresh() || !sameText(pending.state, state)) {
        throw new UnknownSignIn();
      }
      const result = await auth(provider, { serverUrl, authorizationCode: code, ...(iss !== undefined && { iss }), ...(options.fetch && { fetchFn: options.fetch }) });
      if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
      delete record.pending;
      await save();
    },
  };
}
