import { describe, expect, it } from 'vitest';
import { parseCliArgs, UsageError } from '../../src/cli/args.ts';
import { createCors } from '../../src/http/cors.ts';
import { isLoopbackHost } from '../../src/config/index.ts';
import { createHostCheck } from '../../src/http/host-check.ts';
import { formatIp } from '../../src/http/engine/index.ts';
import { createConnectionCounter, createWindowLimiter } from '../../src/http/limits.ts';
import { createRouter } from '../../src/http/router.ts';
import { validateImage } from '../../src/conversation/image-data.ts';
import { parseInput } from '../../src/http/validate.ts';
import { z } from 'zod';

const bytes = (...b: number[]) => new Uint8Array(b).buffer;

describe('formatIp', () => {
  it('prints IPv4 and folds IPv4-mapped IPv6 to IPv4', () => {
    expect(formatIp(bytes(127, 0, 0, 1))).toBe('127.0.0.1');
    expect(formatIp(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3))).toBe('10.1.2.3');
  });
  it('compresses IPv6 zero runs', () => {
    expect(formatIp(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))).toBe('::1');
    expect(formatIp(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10))).toBe('2001:db8::10');
  });
});

describe('router', () => {
  const h = () => ({ body: {} });
  const router = createRouter([
    { method: 'GET', path: '/api/health', summary: 'health', handler: h },
    { method: 'GET', path: '/api/mcp/servers/:serverId/tools', summary: 'tools', handler: h },
    { method: 'POST', path: '/api/mcp/servers/:serverId/tools/:toolName/execute', summary: 'execute', handler: h },
  ]);
  it('matches static and parametrised paths, decoding parameters', () => {
    expect(router.lookup('GET', '/api/health').match?.params).toEqual({});
    expect(router.lookup('POST', '/api/mcp/servers/my%20fs/tools/read_file/execute').match?.params).toEqual({
      serverId: 'my fs',
      toolName: 'read_file',
    });
  });
  it('tells a wrong method from an unknown path', () => {
    expect(router.lookup('POST', '/api/health')).toEqual({ match: undefined, pathKnown: true });
    expect(router.lookup('DELETE', '/api/mcp/servers/x/tools')).toEqual({ match: undefined, pathKnown: true });
    expect(router.lookup('GET', '/api/nope')).toEqual({ match: undefined, pathKnown: false });
    expect(router.lookup('GET', '/api/mcp/servers//tools')).toMatchObject({ match: undefined });
  });
  it('rejects malformed escapes with INVALID_REQUEST', () => {
    expect(() => router.lookup('GET', '/api/mcp/servers/%E0%A4%A/tools')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
  });
});

describe('parseInput', () => {
  const schema = z.object({ name: z.string(), config: z.object({ type: z.string() }) });
  it('gives MISSING_FIELD with the dotted field name', () => {
    expect(() => parseInput(schema, {})).toThrow(
      expect.objectContaining({ code: 'MISSING_FIELD', details: { field: 'name' } }),
    );
    expect(() => parseInput(schema, { name: 'a', config: {} })).toThrow(
      expect.objectContaining({ details: { field: 'config.type' } }),
    );
  });
  it('gives INVALID_REQUEST with issues for wrong types', () => {
    expect(() => parseInput(schema, { name: 1, config: { type: 'x' } })).toThrow(
      expect.objectContaining({
        code: 'INVALID_REQUEST',
        details: { field: 'name', issues: [expect.objectContaining({ path: 'name' })] },
      }),
    );
    expect(() => parseInput(schema, 'text')).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
  });
});

describe('validateImage', () => {
  it('accepts a real image payload', () => {
    expect(validateImage({ base64: 'iVBORw0KGgo=', mimeType: 'image/PNG' })).toEqual({
      base64: 'iVBORw0KGgo=',
      mimeType: 'image/png',
    });
  });
  it('refuses bad base64, non-image types and oversize images', () => {
    expect(() => validateImage({ base64: 'not base64!!', mimeType: 'image/png' })).toThrow(/not valid base64/);
    expect(() => validateImage({ base64: 'iVBORw0KGgo=', mimeType: 'text/plain' })).toThrow(/not an image/);
    const big = 'A'.repeat(Math.ceil((10 * 1024 * 1024 + 3) / 3) * 4);
    expect(() => validateImage({ base64: big, mimeType: 'image/png' })).toThrow(/limit/);
  });
});

describe('limits', () => {
  it('counts a window per key with remaining and reset', async () => {
    const limiter = createWindowLimiter(2, 60, { now: () => 1_000_000 });
    const a1 = await limiter.consume('a');
    const a2 = await limiter.consume('a');
    const a3 = await limiter.consume('a');
    const b1 = await limiter.consume('b');
    expect([a1.allowed, a2.allowed, a3.allowed, b1.allowed]).toEqual([true, true, false, true]);
    expect([a1.remaining, a2.remaining, a3.remaining]).toEqual([1, 0, 0]);
    expect(a3.resetTime).toBeGreaterThan(1000);
    expect(a3.limit).toBe(2);
  });
  it('caps concurrent connections per IP', () => {
    const c = createConnectionCounter(2);
    expect([c.tryOpen('x'), c.tryOpen('x'), c.tryOpen('x'), c.tryOpen('y')]).toEqual([true, true, false, true]);
    c.close('x');
    expect(c.tryOpen('x')).toBe(true);
  });
});

describe('cors', () => {
  const cors = createCors({
    origins: ['https://app.example'],
    methods: ['GET'],
    headers: ['Content-Type'],
    maxAge: 86400,
  });
  it('allows no-Origin, listed and same-origin requests only', () => {
    expect(cors.isAllowed('', 'localhost:3001')).toBe(true);
    expect(cors.isAllowed('https://app.example', 'localhost:3001')).toBe(true);
    expect(cors.isAllowed('http://localhost:3001', 'localhost:3001')).toBe(true);
    expect(cors.isAllowed('https://evil.example', 'localhost:3001')).toBe(false);
  });
  it('answers preflights with methods, headers and max age', () => {
    expect(cors.preflight('https://app.example')).toEqual({
      'Access-Control-Allow-Origin': 'https://app.example',
      Vary: 'Origin',
      'Access-Control-Allow-Methods': 'GET',
      'Access-Control-Allow-Headers': 'Content-Type',
      'Access-Control-Max-Age': '86400',
    });
  });
});

describe('cli arguments', () => {
  it('has the documented defaults', () => {
    expect(parseCliArgs([])).toEqual({
      command: 'serve',
      mode: 'web',
      mcpTransport: 'http',
      port: undefined,
      host: undefined,
      agent: undefined,
      logLevel: 'info',
      inspect: false,
      inspectContent: false,
      inspectRelay: undefined,
      workers: 1,
    });
  });
  it('reads the commands: help and version first, init with its own flags, demo alone', () => {
    expect(parseCliArgs(['--agent', 'a.yml', '--help'])).toEqual({ command: 'help' });
    expect(parseCliArgs(['-v'])).toEqual({ command: 'version' });
    expect(parseCliArgs(['init'])).toEqual({
      command: 'init',
      file: 'agent.yml',
      provider: undefined,
      model: undefined,
      force: false,
    });
    expect(parseCliArgs(['init', 'x.yml', '--provider', 'ollama', '--model', 'm', '--force'])).toEqual({
      command: 'init',
      file: 'x.yml',
      provider: 'ollama',
      model: 'm',
      force: true,
    });
    expect(parseCliArgs(['demo'])).toEqual({ command: 'demo' });
  });
  it('turns the inspector on with --inspect, and with content by --inspect-content alone', () => {
    expect(parseCliArgs(['--inspect'])).toMatchObject({ inspect: true, inspectContent: false });
    expect(parseCliArgs(['--inspect-content'])).toMatchObject({ inspect: true, inspectContent: true });
  });
  it('parses every flag', () => {
    expect(
      parseCliArgs([
        '--mode',
        'mcp',
        '--web-port',
        '0',
        '--host',
        '127.0.0.2',
        '--agent',
        'a.yml',
        '--log-level',
        'debug',
        '--workers',
        '2',
      ]),
    ).toMatchObject({
      mode: 'mcp',
      port: 0,
      host: '127.0.0.2',
      agent: 'a.yml',
      logLevel: 'debug',
      workers: 2,
    });
  });
  it('makes --mcp-transport stdio imply mcp mode', () => {
    expect(parseCliArgs(['--mcp-transport', 'stdio'])).toMatchObject({ mode: 'mcp', mcpTransport: 'stdio' });
  });
  it.each([
    [['--mcp-transport', 'carrier-pigeon']],
    [['--bogus']],
    [['--mode', 'tui']],
    [['--web-port', 'abc']],
    [['--web-port', '70000']],
    [['--log-level', 'loud']],
    [['stray']],
    [['--workers', '0']],
    [['--workers', 'two']],
    [['--workers', '2', '--mcp-transport', 'stdio']],
    [['init', '--web-port', '1']],
    [['init', 'a.yml', 'b.yml']],
    [['--provider', 'ollama']],
    [['demo', '--agent', 'a.yml']],
    [['serve']],
  ])('refuses %j', (argv) => expect(() => parseCliArgs(argv)).toThrow(UsageError));
});

describe('isLoopbackHost (the one loopback test: binds, Host headers)', () => {
  it.each([
    ['localhost', true],
    ['LOCALHOST', true],
    ['127.0.0.1', true],
    ['127.9.8.7', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['127.0.0.1.evil.com', false],
    ['10.0.0.1', false],
    ['localhost.evil.com', false],
    ['::', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('host check (DNS rebinding)', () => {
  it('accepts only loopback names (and configured hosts) while bound to loopback', () => {
    const hosts = createHostCheck(['agent.internal:8080']);
    hosts.bound('127.0.0.1');
    for (const ok of [
      'localhost:3001',
      '127.0.0.1:3001',
      '127.0.0.5',
      '[::1]:3001',
      'LOCALHOST',
      '',
      'agent.internal:8080',
    ])
      expect(hosts.isAllowed(ok), ok).toBe(true);
    for (const bad of ['evil.example', 'evil.example:3001', '127.0.0.1.evil.example', 'agent.internal:9090'])
      expect(hosts.isAllowed(bad), bad).toBe(false);
  });
  it('accepts any host on a public bind unless allowedHosts narrows it', () => {
    const open = createHostCheck([]);
    open.bound('0.0.0.0');
    expect(open.isAllowed('agent.example.com')).toBe(true);
    const narrow = createHostCheck(['agent.example.com']);
    narrow.bound('0.0.0.0');
    expect(narrow.isAllowed('agent.example.com')).toBe(true);
    expect(narrow.isAllowed('other.example.com')).toBe(false);
  });
});
