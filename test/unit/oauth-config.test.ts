/** The `oauth` key of an http tool server: what the schema accepts, and that its secret is redacted everywhere. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';
import { exportConfigYaml } from '../../src/config/export.ts';
import { createRedactor } from '../../src/config/redact.ts';

const SECRET = 'client-secret-value-123';
const config = (oauth: Record<string, unknown>) =>
  parseConfig({ llm: { model: 'm' }, storage: { type: 'memory' }, mcpServers: { remote: { type: 'http', baseUrl: 'https://mcp.example.com/mcp', oauth } } });

describe('mcpServers.<name>.oauth', () => {
  it('defaults to the authorization-code grant with dynamic registration', () => {
    const remote = config({}).mcpServers.remote;
    expect(remote?.type === 'http' && remote.oauth).toEqual({ grant: 'authorization_code' });
  });

  it('the client-credentials grant needs clientId and clientSecret', () => {
    expect(() => config({ grant: 'client_credentials', clientId: 'c' })).toThrow(/needs clientId and clientSecret/);
    expect(() => config({ grant: 'client_credentials', clientId: 'c', clientSecret: SECRET })).not.toThrow();
    expect(() => config({ grant: 'password' })).toThrow();
    expect(() => config({ redirectUrl: 'ftp://x.example/cb' })).toThrow();
  });

  it('its clientSecret is redacted in texts and in the export', () => {
    const c = config({ grant: 'client_credentials', clientId: 'c', clientSecret: SECRET });
    expect(createRedactor(c).redact(`failed with ${SECRET}`)).toBe('failed with [REDACTED]');
    expect(exportConfigYaml(c)).not.toContain(SECRET);
  });
});
