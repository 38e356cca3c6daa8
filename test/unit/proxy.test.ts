/** Which forward proxy a request goes through (src/proxy.ts): settings, HTTPS_PROXY/HTTP_PROXY, NO_PROXY. */
import { describe, expect, it } from 'vitest';
import { proxyFor } from '../../src/egress/proxy.ts';

const via = (target: string, env: NodeJS.ProcessEnv, setting?: string | false) => proxyFor(target, setting, env)?.href;

describe('proxyFor', () => {
  it('takes the proxy of the scheme from the environment, lower-case first; https falls back to the http one', () => {
    expect(via('https://api.example.com/v1', { HTTPS_PROXY: 'http://up:3128' })).toBe('http://up:3128/');
    expect(via('https://api.example.com/v1', { https_proxy: 'http://low:1', HTTPS_PROXY: 'http://up:2' })).toBe(
      'http://low:1/',
    );
    expect(via('https://api.example.com/v1', { HTTP_PROXY: 'http://plain:3128' })).toBe('http://plain:3128/');
    expect(via('http://api.example.com/v1', { HTTPS_PROXY: 'http://secure:3128' })).toBeUndefined();
    expect(via('http://api.example.com/v1', { http_proxy: 'proxy.corp:8080' })).toBe('http://proxy.corp:8080/');
    expect(via('http://api.example.com/v1', {})).toBeUndefined();
  });

  it('exempts what NO_PROXY names: *, hosts and domains (with or without a dot), IPs, ports', () => {
    const env = (list: string) => ({ HTTPS_PROXY: 'http://p:1', NO_PROXY: list });
    const exempt = (target: string, list: string) => via(target, env(list)) === undefined;
    expect(exempt('https://api.example.com', '*')).toBe(true);
    expect(exempt('https://api.example.com', 'example.com')).toBe(true);
    expect(exempt('https://api.example.com', '.example.com')).toBe(true);
    expect(exempt('https://api.example.com', '*.example.com')).toBe(true);
    expect(exempt('https://example.com', '.example.com')).toBe(true);
    expect(exempt('https://notexample.com', 'example.com')).toBe(false);
    expect(exempt('https://api.example.com', 'other.org, example.com')).toBe(true);
    expect(exempt('https://api.example.com', 'other.org example.com')).toBe(true);
    expect(exempt('https://api.example.com:8443', 'example.com:8443')).toBe(true);
    expect(exempt('https://api.example.com', 'example.com:8443')).toBe(false);
    expect(exempt('https://api.example.com', 'example.com:443')).toBe(true);
    expect(exempt('https://10.0.0.5:9000', '10.0.0.5')).toBe(true);
    expect(exempt('https://[::1]:9000', '::1')).toBe(true);
    expect(exempt('https://[::1]:9000', '[::1]:9000')).toBe(true);
    expect(exempt('https://API.Example.COM', 'example.com')).toBe(true);
    expect(exempt('https://api.example.com', '')).toBe(false);
  });

  it('lets a proxy setting win: a URL always (NO_PROXY does not exempt it), false never', () => {
    const env = { HTTPS_PROXY: 'http://env:1', NO_PROXY: '*' };
    expect(via('https://api.example.com', env, 'http://mine:2')).toBe('http://mine:2/');
    expect(via('https://api.example.com', { HTTPS_PROXY: 'http://env:1' }, false)).toBeUndefined();
  });
});
