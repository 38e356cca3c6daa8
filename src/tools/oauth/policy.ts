/**
 * What agentd accepts of an OAuth tool server and its authorization server before sending them anything. Each check
 * throws an Error saying what was refused (it becomes the server record's `error`):
 * - every endpoint is `https:`, or `http:` on a loopback host (OAuth 2.1 §1.5, RFC 8252 §8.3);
 * - the authorization server metadata's `issuer` is the URL it was discovered from (RFC 8414 §3.3);
 * - the protected resource metadata exists and its `resource` is the server's URL or a prefix on its origin (RFC 9728).
 */
import { isIP } from 'node:net';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/client';

/** Loopback host names and addresses (the brackets of an IPv6 URL host stripped). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/** Refuses a URL that is not https (or http on loopback); `what` names it in the error. */
export function checkSecureUrl(value: string | URL | undefined, what: string): void {
  if (value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`OAuth refused: ${what} is not a URL`);
  }
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return;
  throw new Error(`OAuth refused: ${what} ${url.origin} is not HTTPS (plain http is allowed on loopback only)`);
}

/** Two issuer identifiers are the same URL (a trailing slash aside). */
export function sameIssuer(a: string, b: string): boolean {
  const norm = (s: string) => {
    try {
      return new URL(s).href.replace(/\/$/, '');
    } catch {
      return s.replace(/\/$/, '');
    }
  };
  return norm(a) === norm(b);
}

/** The resource metadata's `resource` names this server: same origin, and a path the server's path lies under. */
export function resourceMatches(resource: string, serverUrl: string): boolean {
  let r: URL;
  let s: URL;
  try {
    r = new URL(resource);
    s = new URL(serverUrl);
  } catch {
    return false;
  }
  if (r.origin !== s.origin || r.hash) return false;
  const withSlash = (p: string) => (p.endsWith('/') ? p : `${p}/`);
  return withSlash(s.pathname).startsWith(withSlash(r.pathname));
}

/** All of the above, on what discovery found for the server at `serverUrl`. */
export function checkDiscovery(serverUrl: string, state: OAuthDiscoveryState): void {
  checkSecureUrl(serverUrl, 'the MCP server');
  const resource = state.resourceMetadata;
  if (!resource) throw new Error('OAuth refused: the server publishes no protected resource metadata (RFC 9728)');
  if (!resourceMatches(resource.resource, serverUrl)) {
    throw new Error(
      `OAuth refused: the protected resource metadata names resource ${resource.resource}, not this server (${serverUrl})`,
    );
  }
  checkSecureUrl(state.authorizationServerUrl, 'the authorization server');
  const metadata = state.authorizationServerMetadata;
  if (!metadata)
    throw new Error(`OAuth refused: no authorization server metadata at ${state.authorizationServerUrl} (RFC 8414)`);
  if (!sameIssuer(metadata.issuer, state.authorizationServerUrl)) {
    throw new Error(
      `OAuth refused: the authorization server metadata names issuer ${metadata.issuer}, not ${state.authorizationServerUrl} where it was found`,
    );
  }
  checkSecureUrl(metadata.issuer, 'the issuer');
  checkSecureUrl(metadata.authorization_endpoint, 'the authorization endpoint');
  checkSecureUrl(metadata.token_endpoint, 'the token endpoint');
  checkSecureUrl(metadata.registration_endpoint, 'the registration endpoint');
}
