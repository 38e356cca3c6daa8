/**
 * The SDK's `OAuthClientProvider` for one tool server, over what its OAuth client holds (client.ts). Discovery runs
 * anew at every authorization and is checked by policy.ts before anything is sent; registration is dynamic
 * (identity.ts) unless `oauth.clientId` is set. Granted scopes are kept with the tokens; a new sign-in is offered
 * only while `oauth.maxSignIns` allows (else SignInRefused).
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { Clock } from '../../clock.ts';
import type { HttpServerConfig, OAuthConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import type { SecretStore } from '../../store/secret-store.ts';
import type { FetchLike } from '../../egress/url-policy.ts';
import { clientMetadataOf, privateKeyJwt } from './identity.ts';
import { checkDiscovery } from './policy.ts';
import { scopeOfUrl, stateOf, type OAuthRecord } from './record.ts';
import type { createRefresher } from './refresh.ts';
import { SignInRefused } from './sign-in-errors.ts';

/** What one server's OAuth client holds between requests: client.ts and the provider read and write it. */
export interface OAuthHeld {
  record: OAuthRecord;
  /** What discovery found for the authorization under way. */
  discovery?: OAuthDiscoveryState | undefined;
  /** The state and verifier of an authorization being started. */
  draft: { state?: string; codeVerifier?: string };
  needsSignIn: boolean;
  refused?: SignInRefused | undefined;
  /** Set while completing a sign-in: its code goes to the authorization server the sign-in began with. */
  completing: boolean;
  /** The scope of the token request under way (kept as granted when the answer names none). */
  askedScope?: string | undefined;
}

/** The options of one server's OAuth client (client.ts), which the provider reads too. */
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

/** What the provider shares with its OAuth client (client.ts). */
export interface ProviderShared {
  save: () => Promise<void>;
  /** A pending sign-in is younger than PENDING_TTL_MS. */
  pendingFresh: () => boolean;
  adoptStoredTokens: () => Promise<boolean>;
  refresher: ReturnType<typeof createRefresher>;
}

export function createProvider(
  held: OAuthHeld,
  options: ServerOAuthOptions,
  shared: ProviderShared,
): OAuthClientProvider {
  const { serverId, config, principal, clock, log } = options;
  const { save, pendingFresh, adoptStoredTokens, refresher } = shared;
  const { oauth, baseUrl: serverUrl } = config;
  const interactive = oauth.grant === 'authorization_code';
  const jwtAuth = privateKeyJwt(oauth);
  const redirectUrl = () => oauth.redirectUrl ?? options.callbackUrl();
  const configuredClient = () =>
    oauth.clientId === undefined
      ? undefined
      : { client_id: oauth.clientId, ...(oauth.clientSecret !== undefined && { client_secret: oauth.clientSecret }) };
  return {
    get redirectUrl() {
      return interactive ? redirectUrl() : undefined;
    },
    get clientMetadata() {
      return clientMetadataOf(oauth, interactive ? redirectUrl() : undefined);
    },
    ...(oauth.clientMetadataUrl !== undefined && { clientMetadataUrl: oauth.clientMetadataUrl }),
    ...(jwtAuth && { addClientAuthentication: jwtAuth }),
    state() {
      held.draft.state = stateOf(randomBytes(24).toString('base64url'), serverId, principal);
      return held.draft.state;
    },
    clientInformation() {
      const configured = configuredClient();
      if (configured) return configured;
      const client = held.record.client;
      // A registration for another callback URL (agentd moved) cannot complete a sign-in: register again, unless a
      // refresh token (bound to it) is held.
      const moved = client && interactive && 'redirect_uris' in client && !client.redirect_uris.includes(redirectUrl());
      if (moved && !held.record.tokens?.refresh_token) return undefined;
      return client;
    },
    async saveClientInformation(info) {
      if (configuredClient()) return;
      held.record.client = info;
      await save();
    },
    async tokens() {
      if (!refresher.running) await refresher.refreshAhead();
      return held.record.tokens;
    },
    async saveTokens(tokens) {
      held.record.tokens = {
        ...tokens,
        scope: tokens.scope ?? held.askedScope ?? held.record.tokens?.scope,
        obtainedAt: clock.now(),
      };
      held.askedScope = undefined;
      await save();
    },
    saveCodeVerifier(codeVerifier) {
      held.draft.codeVerifier = codeVerifier;
    },
    codeVerifier() {
      const verifier = held.record.pending?.codeVerifier;
      if (verifier === undefined) throw new Error('no authorization is pending');
      return verifier;
    },
    async redirectToAuthorization(url) {
      if (pendingFresh()) return void (held.needsSignIn = true); // keep the URL an admin may be following
      const signIns = held.record.signIns ?? 0;
      if (signIns >= oauth.maxSignIns) {
        held.refused = new SignInRefused(signIns, scopeOfUrl(url.href), principal);
        throw held.refused;
      }
      held.needsSignIn = true;
      if (held.draft.state === undefined || held.draft.codeVerifier === undefined)
        throw new Error('authorization started without state or verifier');
      held.record.pending = {
        state: held.draft.state,
        codeVerifier: held.draft.codeVerifier,
        url: url.href,
        createdAt: clock.now(),
        discovery: held.discovery,
      };
      held.draft = {};
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
      if (scope === 'all' || scope === 'client') delete held.record.client;
      if (scope === 'all' || scope === 'tokens') delete held.record.tokens;
      if (scope === 'all' || scope === 'verifier') delete held.record.pending;
      if (scope === 'all' || scope === 'discovery') held.discovery = undefined;
      if ((scope === 'all' || scope === 'discovery') && held.record.pending) delete held.record.pending.discovery;
      await save();
    },
    saveDiscoveryState(state) {
      checkDiscovery(serverUrl, state);
      held.discovery = state;
    },
    discoveryState() {
      // Only the code of a sign-in reuses what was found (any instance may complete it): anything else discovers anew.
      return held.completing ? held.record.pending?.discovery : undefined;
    },
    prepareTokenRequest(scope) {
      if (!held.completing) held.askedScope = scope;
      if (interactive) return undefined;
      return new URLSearchParams({ grant_type: 'client_credentials', ...(scope && { scope }) });
    },
  };
}
