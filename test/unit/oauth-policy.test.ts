/** What agentd refuses of an OAuth authorization server before sending it anything (src/tools/oauth/policy.ts). */
import { describe, expect, it } from 'vitest';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/client';
import {
  checkDiscovery,
  checkSecureUrl,
  isLoopbackHost,
  resourceMatches,
  sameIssuer,
} from '../../src/tools/oauth/policy.ts';

const metadata = (issuer: string, over: Record<string, unknown> = {}) => ({
  issuer,
  authorization_endpoint: `${issuer}authorize`,
  token_endpoint: `${issuer}token`,
  registration_endpoint: `${issuer}register`,
  response_types_supported: ['code'],
  ...over,
});
const discovery = (
  server: string,
  as: string,
  over: { resource?: string; metadata?: Record<string, unknown>; issuer?: string } = {},
): OAuthDiscoveryState => ({
  authorizationServerUrl: as,
  resourceMetadata: { resource: over.resource ?? server, authorization_servers: [as] },
  authorizationServerMetadata: metadata(over.issuer ?? as, over.metadata),
});

describe('OAuth endpoints: https, or http on loopback only', () => {
  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.9.8.7', '[::1]', '::1', 'localhost', 'a.localhost'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['10.0.0.1', '192.168.1.1', 'example.com', 'localhost.example.com', '[::ffff:10.0.0.1]', '0.0.0.0'])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it('refuses non-HTTPS endpoints that are not loopback', () => {
    expect(() => checkSecureUrl('http://auth.example.com/token', 'the token endpoint')).toThrow(
      /the token endpoint http:\/\/auth\.example\.com is not HTTPS/,
    );
    expect(() => checkSecureUrl('http://10.0.0.5:8080/', 'the authorization server')).toThrow(/not HTTPS/);
    expect(() => checkSecureUrl('ftp://example.com/x', 'the issuer')).toThrow(/not HTTPS/);
    expect(() => checkSecureUrl('not a url', 'the issuer')).toThrow(/not a URL/);
    for (const ok of [
      'https://auth.example.com/token',
      'http://127.0.0.1:9/token',
      'http://[::1]:9/',
      'http://localhost/x',
    ])
      expect(() => checkSecureUrl(ok, 'x')).not.toThrow();
  });

  it('refuses a discovery naming a plain-http public endpoint anywhere', () => {
    const server = 'https://mcp.example.com/mcp';
    const as = 'https://auth.example.com/';
    expect(() => checkDiscovery(server, discovery(server, as))).not.toThrow();
    for (const key of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint']) {
      expect(
        () => checkDiscovery(server, discovery(server, as, { metadata: { [key]: 'http://evil.example.com/x' } })),
        key,
      ).toThrow(/is not HTTPS/);
    }
    expect(() => checkDiscovery('http://mcp.example.com/mcp', discovery('http://mcp.example.com/mcp', as))).toThrow(
      /the MCP server .* is not HTTPS/,
    );
    expect(() => checkDiscovery(server, discovery(server, 'http://auth.example.com/'))).toThrow(
      /the authorization server .* is not HTTPS/,
    );
  });
});

describe('issuer and resource', () => {
  it('the metadata issuer must be where it was found (a trailing slash aside)', () => {
    expect(sameIssuer('https://a.example/', 'https://a.example')).toBe(true);
    expect(sameIssuer('https://a.example/t1', 'https://a.example/t1/')).toBe(true);
    expect(sameIssuer('https://a.example/t1', 'https://a.example/t2')).toBe(false);
    expect(sameIssuer('https://evil.example/', 'https://a.example/')).toBe(false);
    const server = 'https://mcp.example.com/mcp';
    expect(() =>
      checkDiscovery(server, discovery(server, 'https://auth.example.com/', { issuer: 'https://evil.example.com/' })),
    ).toThrow(/names issuer https:\/\/evil\.example\.com\/, not https:\/\/auth\.example\.com\//);
  });

  it('the protected resource must be this server (same origin, a path it lies under)', () => {
    expect(resourceMatches('https://mcp.example.com/mcp', 'https://mcp.example.com/mcp')).toBe(true);
    expect(resourceMatches('https://mcp.example.com/', 'https://mcp.example.com/mcp')).toBe(true);
    expect(resourceMatches('https://mcp.example.com/mcp/', 'https://mcp.example.com/mcp')).toBe(true);
    expect(resourceMatches('https://mcp.example.com/other', 'https://mcp.example.com/mcp')).toBe(false);
    expect(resourceMatches('https://mcp.example.com/mc', 'https://mcp.example.com/mcp')).toBe(false);
    expect(resourceMatches('https://evil.example.com/mcp', 'https://mcp.example.com/mcp')).toBe(false);
    expect(resourceMatches('http://mcp.example.com/mcp', 'https://mcp.example.com/mcp')).toBe(false);
    const server = 'https://mcp.example.com/mcp';
    expect(() =>
      checkDiscovery(
        server,
        discovery(server, 'https://auth.example.com/', { resource: 'https://other.example.com/mcp' }),
      ),
    ).toThrow(/names resource/);
  });

  it('refuses a server without protected resource metadata or an authorization server without metadata', () => {
    const server = 'https://mcp.example.com/mcp';
    expect(() => checkDiscovery(server, { authorizationServerUrl: 'https://mcp.example.com/' })).toThrow(
      /no protected resource metadata/,
    );
    const { authorizationServerMetadata: _, ...withoutMetadata } = discovery(server, 'https://auth.example.com/');
    expect(() => checkDiscovery(server, withoutMetadata)).toThrow(/no authorization server metadata/);
  });
});
