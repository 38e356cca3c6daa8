/**
 * What the one redaction learns (src/config/redact.ts, issue 57 item 6): the credentials of a server connected at
 * runtime, never its host or a short value, and the base64 form of what it learns.
 */
import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED } from '../../src/config/redact.ts';
import type { McpServerConfig } from '../../src/config/schema.ts';

const http = (baseUrl: string) => ({ type: 'http', baseUrl, headers: {} }) as unknown as McpServerConfig;
const stdio = (env: Record<string, string>) =>
  ({ type: 'stdio', command: 'x', args: [], env }) as unknown as McpServerConfig;

describe('the redaction learns secrets, not hosts or short values', () => {
  it('a connect with URL credentials at 127.0.0.1 hides the credentials, not every later 127.0.0.1', () => {
    const { addServer, redact } = createRedactor();
    for (const url of [
      'http://127.0.0.1:9@127.0.0.1/mcp',
      'http://127.0.0.1@127.0.0.1:9/mcp',
      'http://[::1]:9@[::1]:9/mcp',
      'http://mcp.example.com@mcp.example.com/mcp',
      'http://user:s3cret-passphrase@127.0.0.1:9/mcp',
    ])
      addServer(http(url));
    expect(redact('reached 127.0.0.1:9, [::1]:9 and mcp.example.com as user')).toBe(
      'reached 127.0.0.1:9, [::1]:9 and mcp.example.com as user',
    );
    expect(redact('password s3cret-passphrase')).toBe(`password ${REDACTED}`);
    expect(redact('http://user:s3cret-passphrase@127.0.0.1:9/mcp')).toBe(`http://${REDACTED}@127.0.0.1:9/mcp`);
  });

  it('never learns a value shorter than 8 characters, nor an address or host name from env', () => {
    const { addServer, addSecret, redact } = createRedactor();
    addServer(
      stdio({ PORT: '8080', MODE: 'prod', HOST: '10.0.0.7', API: 'api.internal.example.org', KEY: 'abcdefgh' }),
    );
    addSecret('short');
    expect(redact('prod 8080 10.0.0.7 api.internal.example.org short abcdefgh')).toBe(
      `prod 8080 10.0.0.7 api.internal.example.org short ${REDACTED}`,
    );
  });

  it('hides the base64 forms of a learned secret, and of URL credentials as Basic authentication sends them', () => {
    const { addServer, addSecret, redact } = createRedactor();
    const secret = 'tok?en>>-0123456789';
    addSecret(secret);
    addServer(http('http://alice:wonderland-42@127.0.0.1:9/mcp'));
    const b64 = Buffer.from(secret).toString('base64');
    const b64url = Buffer.from(secret).toString('base64url');
    const basic = Buffer.from('alice:wonderland-42').toString('base64');
    expect(redact(`a ${b64} b ${b64url} c Basic ${basic}`)).toBe(`a ${REDACTED} b ${REDACTED} c Basic ${REDACTED}`);
  });
});
