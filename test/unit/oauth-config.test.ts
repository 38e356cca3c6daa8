/** The `oauth` key of an http tool server: what the schema accepts, and that its secret is redacted everywhere. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';
import { resolveRelativePaths } from '../../src/config/load.ts';
import { exportConfigYaml } from '../../src/config/export.ts';
import { createRedactor } from '../../src/config/redact.ts';

const SECRET = 'client-secret-value-123';
const PEM =
  '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHm8ex6wJ6d0gH8uV1Q0cJ7mY0Y8m1f2lQv3n5m0pQ2k\n-----END PRIVATE KEY-----\n';
const config = (oauth: Record<string, unknown>) =>
  parseConfig({
    llm: { model: 'm' },
    storage: { type: 'memory' },
    mcpServers: { remote: { type: 'http', baseUrl: 'https://mcp.example.com/mcp', oauth } },
  });

describe('mcpServers.<name>.oauth', () => {
  it('defaults to the authorization-code grant with dynamic registration', () => {
    const remote = config({}).mcpServers.remote;
    expect(remote?.type === 'http' && remote.oauth).toEqual({
      grant: 'authorization_code',
      per: 'server',
      maxSignIns: 3,
    });
  });

  it('the client-credentials grant needs clientId and clientSecret', () => {
    expect(() => config({ grant: 'client_credentials', clientId: 'c' })).toThrow(/needs clientId and clientSecret/);
    expect(() => config({ grant: 'client_credentials', clientId: 'c', clientSecret: SECRET })).not.toThrow();
    expect(() => config({ grant: 'password' })).toThrow();
    expect(() => config({ redirectUrl: 'ftp://x.example/cb' })).toThrow();
  });

  it('private_key_jwt: a key (inline or a file) for a clientId, in place of a secret', () => {
    expect(() => config({ grant: 'client_credentials', clientId: 'c', privateKey: PEM })).not.toThrow();
    expect(() =>
      config({ grant: 'client_credentials', clientId: 'c', privateKeyFile: './key.pem', signingAlgorithm: 'ES256' }),
    ).not.toThrow();
    expect(() => config({ grant: 'client_credentials', clientId: 'c', clientSecret: SECRET, privateKey: PEM })).toThrow(
      /one of clientSecret, privateKey and privateKeyFile/,
    );
    expect(() => config({ privateKey: PEM })).toThrow(/privateKey needs the clientId/);
    expect(() => config({ clientId: 'c', privateKey: PEM, signingAlgorithm: 'HS256' })).toThrow();
  });

  it('per: principal is for the authorization-code grant (each principal is a person who signs in)', () => {
    expect(() => config({ per: 'principal' })).not.toThrow();
    expect(() =>
      config({ per: 'principal', grant: 'client_credentials', clientId: 'c', clientSecret: SECRET }),
    ).toThrow(/per: principal needs the authorization_code grant/);
    expect(() => config({ per: 'everyone' })).toThrow();
  });

  it('a client ID metadata document is named by an https URL', () => {
    expect(() => config({ clientMetadataUrl: 'https://agentd.example.com/oauth/client.json' })).not.toThrow();
    expect(() => config({ clientMetadataUrl: 'http://agentd.example.com/oauth/client.json' })).toThrow();
  });

  it('a private key file is relative to the agent file, and a private key is redacted in texts and in the export', () => {
    const withFile = resolveRelativePaths(
      config({ clientId: 'c', privateKeyFile: './keys/agent.pem' }),
      {},
      '/etc/agentd',
    );
    const remote = withFile.mcpServers.remote;
    expect(remote?.type === 'http' && remote.oauth?.privateKeyFile).toBe('/etc/agentd/keys/agent.pem');
    const c = config({ grant: 'client_credentials', clientId: 'c', privateKey: PEM });
    expect(createRedactor(c).redact(`refused ${PEM}`)).toBe('refused [REDACTED]');
    expect(exportConfigYaml(c)).not.toContain('MC4CAQAwBQYDK2VwBCIEI');
  });

  it('its clientSecret is redacted in texts and in the export', () => {
    const c = config({ grant: 'client_credentials', clientId: 'c', clientSecret: SECRET });
    expect(createRedactor(c).redact(`failed with ${SECRET}`)).toBe('failed with [REDACTED]');
    expect(exportConfigYaml(c)).not.toContain(SECRET);
  });
});
