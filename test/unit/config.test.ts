import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, exportConfigYaml, loadConfig, parseConfig, REDACTED } from '../../src/config/index.ts';
import { createRedactor } from '../../src/config/redact.ts';

const minimal = { llm: { model: 'm' } };

describe('agent config', () => {
  it('fills defaults for a minimal config', () => {
    const c = parseConfig(minimal);
    expect(c.llm).toMatchObject({ provider: 'openai', model: 'm', maxIterations: 20, maxRetries: 2 });
    expect(c.server.limits).toMatchObject({
      rest: { points: 100, durationSec: 60 },
      ws: { points: 50 },
      connectionsPerIp: 10,
    });
    expect(c.server.cors).toMatchObject({ origins: [], maxAge: 86_400 });
    // Inline (no agent file); loadConfig gives a file's own folder in the per-user data folder (storage-dir.test.ts).
    expect(c.storage).toEqual({ type: 'jsonl', dir: './data/sessions', maxSessionsInMemory: 1000 });
    expect(c.version).toBe('1.0.0');
  });

  it('expands $NAME and ${NAME} from the environment, and $$ to a literal $', () => {
    const c = parseConfig({ llm: { model: 'm-${SUFFIX}', apiKey: '$KEY' }, systemPrompt: 'costs $$5' }, 'x.yml', {
      KEY: 'sk-1',
      SUFFIX: 'large',
    });
    expect(c.llm.apiKey).toBe('sk-1');
    expect(c.llm.model).toBe('m-large');
    expect(c.systemPrompt).toBe('costs $5');
  });

  it('names a missing environment variable and where it is used', () => {
    const err = (() => {
      try {
        parseConfig({ llm: { model: 'm', apiKey: '$NOPE_NOT_SET' } }, 'a.yml', {});
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems).toEqual([
      'llm.apiKey: environment variable NOPE_NOT_SET is not set (referenced at llm.apiKey)',
    ]);
    expect(err!.message).toContain('a.yml');
  });

  it('names every missing environment variable at once, each with every place it is used', () => {
    const doc = {
      llm: { model: '${MODEL_NOT_SET}', apiKey: '$KEY_NOT_SET', baseURL: 'http://${HOST_NOT_SET}:8080/v1' },
      mcpServers: { fs: { type: 'stdio', command: 'node', args: ['$KEY_NOT_SET', '$SET', 'costs $$5'] } },
    };
    const err = (() => {
      try {
        parseConfig(doc, 'b.yml', { SET: 'yes' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems).toEqual([
      'llm.model: environment variable MODEL_NOT_SET is not set (referenced at llm.model)',
      'llm.apiKey: environment variable KEY_NOT_SET is not set (referenced at llm.apiKey, mcpServers.fs.args[0])',
      'llm.baseURL: environment variable HOST_NOT_SET is not set (referenced at llm.baseURL)',
    ]);
  });

  it('reports every schema problem with its path', () => {
    try {
      parseConfig({ llm: { model: 'm', temperature: 9 }, mcpServers: { fs: { type: 'stdio' } }, bogus: 1 });
      expect.unreachable();
    } catch (e) {
      const problems = (e as ConfigError).problems.join('\n');
      expect(problems).toMatch(/llm\.temperature: .*<=2/);
      expect(problems).toMatch(/mcpServers\.fs\.command: /);
      expect(problems).toMatch(/bogus/);
    }
  });

  it('refuses server names a REST path cannot address (`.` and `..`), and takes other dotted names', () => {
    const server = { type: 'stdio', command: 'node' };
    for (const name of ['.', '..'])
      expect(() => parseConfig({ llm: { model: 'm' }, mcpServers: { [name]: server } })).toThrow(ConfigError);
    expect(
      Object.keys(parseConfig({ llm: { model: 'm' }, mcpServers: { 'a.b': server, '...': server } }).mcpServers),
    ).toEqual(['a.b', '...']);
  });

  it('reports unreadable files and broken YAML', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-config-'));
    await expect(loadConfig(join(dir, 'missing.yml'))).rejects.toThrow(/cannot read file/);
    await writeFile(join(dir, 'bad.yml'), 'llm: [unclosed');
    await expect(loadConfig(join(dir, 'bad.yml'))).rejects.toThrow(/not valid YAML/);
  });

  it('loads every YAML under agents/', async () => {
    const env = {
      OPENAI_API_KEY: 'sk-test',
      VLLM_API_KEY: 'k',
      REMOTE_MCP_TOKEN: 't',
      HOME: '/tmp',
      PATH: '/bin',
      AGENTD_DEMO_MODEL_URL: 'http://127.0.0.1:4010/v1',
      AGENTD_DEMO_DATA: '/tmp/agentd-data',
      AGENTD_DEMO_SERVERS: '/opt/node_modules/@modelcontextprotocol',
    };
    const files = (await readdir('agents', { recursive: true })).filter((f) => f.endsWith('.yml'));
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const f of files) {
      const config = await loadConfig(join('agents', f), env);
      expect(config.llm.model, f).toBeTruthy();
    }
  });
});

describe('config export', () => {
  const secretConfig = parseConfig({
    version: '2.3.4',
    llm: {
      model: 'm',
      apiKey: 'sk-live-supersecret-1234567890',
      baseURL: 'https://user:pw-in-url@llm.example/v1?api_key=querysecret',
    },
    mcpServers: {
      fs: {
        type: 'stdio',
        command: 'node',
        args: ['srv.js'],
        env: { GITHUB_TOKEN: 'ghp_envsecretvalue', PLAIN: 'also-hidden' },
      },
      remote: {
        type: 'http',
        baseUrl: 'http://127.0.0.1:9/mcp',
        headers: { Authorization: 'Bearer header-secret', 'X-Custom': 'custom-secret' },
      },
    },
    server: {
      auth: {
        apiKey: 'server-api-key-0123456789',
        keys: [{ name: 'ci', key: 'named-key-secret-0123456789', scopes: ['chat', 'inspect'] }],
      },
    },
  });

  it('round-trips as YAML with version and no secret value anywhere', () => {
    const text = exportConfigYaml(secretConfig);
    for (const secret of [
      'supersecret',
      'pw-in-url',
      'querysecret',
      'envsecretvalue',
      'also-hidden',
      'header-secret',
      'custom-secret',
      'server-api-key',
      'named-key-secret',
    ]) {
      expect(text).not.toContain(secret);
    }
    const doc = parse(text) as Record<string, any>;
    expect(Object.keys(doc)[0]).toBe('version');
    expect(doc.version).toBe('2.3.4');
    expect(doc.llm.apiKey).toBe(REDACTED);
    expect(doc.mcpServers.fs.env).toEqual({ GITHUB_TOKEN: REDACTED, PLAIN: REDACTED });
    expect(doc.mcpServers.remote.headers).toEqual({ Authorization: REDACTED, 'X-Custom': REDACTED });
    expect(doc.mcpServers.fs.args).toEqual(['srv.js']);
    expect(doc.llm.model).toBe('m');
    expect(doc.server.auth.keys).toEqual([{ name: 'ci', key: REDACTED, scopes: ['chat', 'inspect'] }]);
  });

  it("hides llm.headers and every fallback's key and headers, in the export and in every output", () => {
    const config = parseConfig({
      llm: {
        model: 'm',
        headers: { 'Helicone-Auth': 'Bearer gateway-secret', 'X-Team': 'team-secret-value' },
        fallback: [
          {
            provider: 'anthropic',
            model: 'claude-x',
            apiKey: 'fallback-key-secret',
            headers: { 'X-Proxy': 'proxy-secret-value' },
          },
        ],
      },
    });
    const doc = parse(exportConfigYaml(config)) as Record<string, any>;
    expect(doc.llm.headers).toEqual({ 'Helicone-Auth': REDACTED, 'X-Team': REDACTED });
    expect(doc.llm.fallback).toEqual([
      { provider: 'anthropic', model: 'claude-x', apiKey: REDACTED, headers: { 'X-Proxy': REDACTED } },
    ]);
    const { redact } = createRedactor(config);
    expect(redact('sent team-secret-value, fallback-key-secret and proxy-secret-value')).toBe(
      `sent ${REDACTED}, ${REDACTED} and ${REDACTED}`,
    );
  });

  it('hides a bearer credential under an innocent key, whatever the case of its scheme', () => {
    const config = parseConfig({
      llm: { model: 'm' },
      mcpServers: {
        fs: {
          type: 'stdio',
          command: 'node',
          args: ['srv.js', 'bearer lower-secret', 'BEARER upper-secret', 'Bearer mixed-secret'],
        },
      },
    });
    const doc = parse(exportConfigYaml(config)) as Record<string, any>;
    expect(doc.mcpServers.fs.args).toEqual(['srv.js', REDACTED, REDACTED, REDACTED]);
  });
});

describe('relative paths in an agent file', () => {
  it('resolve against the file folder when written: storage dir, stdio cwd, ./ and ../ command and args', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-paths-'));
    const file = join(dir, 'agent.yml');
    await writeFile(
      file,
      'llm: { provider: ollama, model: m }\nstorage: { type: jsonl, dir: data/sessions }\n' +
        'mcpServers:\n  s: { type: stdio, command: ./bin/server, args: [../lib/x.js, --flag, plain/word], cwd: work }\n',
    );
    const config = await loadConfig(file);
    expect(config.storage).toMatchObject({ dir: join(dir, 'data/sessions') });
    expect(config.mcpServers.s).toMatchObject({
      command: join(dir, 'bin/server'),
      args: [join(dir, '../lib/x.js'), '--flag', 'plain/word'],
      cwd: join(dir, 'work'),
    });
    await writeFile(file, 'llm: { provider: ollama, model: m }\n');
    // A default: the file's own folder in the per-user data folder, whatever the working folder.
    const data = join(dir, 'xdg');
    const unset = await loadConfig(file, { XDG_DATA_HOME: data }, { cwd: '/' });
    expect(unset.storage).toMatchObject({ dir: expect.stringMatching(/\/xdg\/agentd\/agent-[0-9a-f]{8}\/sessions$/) });
    expect((unset.storage as { dir: string }).dir.startsWith(data)).toBe(true);
  });

  it('resolve server.auth.jwt.jwksFile against the file folder too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-paths-'));
    const file = join(dir, 'agent.yml');
    await writeFile(
      file,
      'llm: { provider: ollama, model: m }\nserver:\n  auth:\n    jwt: { issuer: https://id.example, audience: agentd, jwksFile: keys/jwks.json }\n',
    );
    expect((await loadConfig(file)).server.auth.jwt).toMatchObject({ jwksFile: join(dir, 'keys/jwks.json') });
  });
});
