/**
 * The URL policy of runtime http servers, as pure functions with a fake resolver: no test here
 * opens a socket, whatever the policy answers.
 */
import { describe, expect, it } from 'vitest';
import { addressRefusal, checkUrl, resolveAllowed, type Lookup } from '../../src/egress/url-policy.ts';

const open = { allowPrivateNetworks: true };
const strict = { allowPrivateNetworks: false };
const reasonOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { details: { reason: string } }).details.reason;
  }
  return undefined;
};

describe('url policy', () => {
  it.each([
    ['http://169.254.169.254/latest', 'metadata'],
    ['http://2852039166/', 'metadata'], // decimal
    ['http://0251.0376.0251.0376/', 'metadata'], // octal
    ['http://0xa9.0xfe.0xa9.0xfe/', 'metadata'], // hex
    ['http://0xa9fea9fe/', 'metadata'],
    ['http://[::ffff:169.254.169.254]/', 'metadata'], // IPv4-mapped
    ['http://[::ffff:a9fe:a9fe]/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://100.100.100.200/', 'metadata'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata'],
    ['http://METADATA.GOOGLE.INTERNAL./', 'metadata'],
    ['http://169.254.1.2:8080/mcp', 'link_local'],
    ['http://[fe80::1]/', 'link_local'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://[::ffff:0.0.0.0]/', 'unspecified'],
    ['http://[64:ff9b::169.254.169.254]/', 'metadata'], // NAT64 (RFC 6052)
    ['http://[64:ff9b::a9fe:a9fe]/', 'metadata'],
    ['http://[64:ff9b:1::a9fe:a9fe]/', 'metadata'], // local-use NAT64 (RFC 8215)
    ['http://[::169.254.169.254]/', 'metadata'], // IPv4-compatible
    ['http://[0:0:0:0:0:0:a9fe:a9fe]/', 'metadata'],
    ['http://[2002:a9fe:a9fe::1]/', 'metadata'], // 6to4
    ['http://[64:ff9b::169.254.1.1]/', 'link_local'],
    ['file:///etc/passwd', 'scheme'],
    ['gopher://127.0.0.1/', 'scheme'],
  ])('refuses %s (%s) even with private networks allowed', (url, reason) => {
    expect(reasonOf(() => checkUrl(url, open))).toBe(reason);
  });

  it.each([
    'http://10.0.0.1/mcp',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://127.0.0.1:3000/mcp',
    'http://[::1]/',
    'http://100.64.0.1/',
    'http://[fc00::1]/',
    'http://2130706433/',
  ])('allows %s by default and refuses it without private networks', (url) => {
    expect(reasonOf(() => checkUrl(url, open))).toBeUndefined();
    expect(reasonOf(() => checkUrl(url, strict))).toBe('private_network');
  });

  it('allows public addresses and names; allowedHosts narrows to names and suffixes', () => {
    expect(reasonOf(() => checkUrl('https://mcp.example.com/mcp', strict))).toBeUndefined();
    const hosts = { ...open, allowedHosts: ['tools.internal', '.example.com'] };
    expect(reasonOf(() => checkUrl('https://a.b.example.com/', hosts))).toBeUndefined();
    expect(reasonOf(() => checkUrl('https://example.com/', hosts))).toBeUndefined();
    expect(reasonOf(() => checkUrl('http://tools.internal:9000/', hosts))).toBeUndefined();
    expect(reasonOf(() => checkUrl('http://evil.com/', hosts))).toBe('host_not_allowed');
    expect(reasonOf(() => checkUrl('http://notexample.com/', hosts))).toBe('host_not_allowed');
  });

  it('checks every address a name resolves to, and hands back the checked ones', async () => {
    const lookup =
      (answers: string[]): Lookup =>
      () =>
        Promise.resolve(answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
    await expect(
      resolveAllowed('http://rebind.test/', open, lookup(['93.184.216.34', '169.254.169.254'])),
    ).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'config.baseUrl', reason: 'metadata' },
    });
    await expect(resolveAllowed('http://internal.test/', strict, lookup(['10.1.2.3']))).rejects.toMatchObject({
      details: { reason: 'private_network' },
    });
    await expect(
      resolveAllowed('http://nowhere.test/', open, () => Promise.reject(new Error('ENOTFOUND'))),
    ).rejects.toMatchObject({ details: { reason: 'unresolvable' } });
    expect(await resolveAllowed('http://ok.test/', strict, lookup(['93.184.216.34', '2606:2800:220:1::1']))).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
  });

  it('judges IPv6 addresses carrying an IPv4 one (mapped, compatible, NAT64, 6to4) by their IPv4 address', () => {
    expect(addressRefusal('::ffff:10.0.0.1', strict)).toBe('private_network');
    expect(addressRefusal('::ffff:7f00:1', strict)).toBe('private_network');
    expect(addressRefusal('::ffff:8.8.8.8', strict)).toBeUndefined();
    expect(addressRefusal('64:ff9b::127.0.0.1', strict)).toBe('private_network');
    expect(addressRefusal('64:ff9b::a00:1', strict)).toBe('private_network');
    expect(addressRefusal('::10.0.0.1', strict)).toBe('private_network');
    expect(addressRefusal('2002:c0a8:101::', strict)).toBe('private_network');
    expect(addressRefusal('64:ff9b::8.8.8.8', strict)).toBeUndefined();
    expect(addressRefusal('2001:4860:4860::8888', strict)).toBeUndefined(); // a public IPv6 address stays one
    expect(addressRefusal('::1', strict)).toBe('private_network'); // loopback, not IPv4-compatible 0.0.0.1
    expect(addressRefusal('::', open)).toBe('unspecified');
  });
});
