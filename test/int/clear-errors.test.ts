/**
 * The clear errors of issue 40 (item 6), with agentd run as users run it: a port in use is one line
 * that names the port and the flag (no stack trace, exit 1), also under `--workers`; a config with
 * several unset environment variables names them all at once; agentd connected to its own /mcp says
 * so, whether the server is connected at runtime or in the agent file, whatever URL reaches it.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import { until } from '../support/wait.ts';

const model = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' };

/** A server of another program, holding a free port. */
function holdPort(): Promise<{ port: number; server: Server }> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () =>
      resolve({ port: (server.address() as { port: number }).port, server }),
    );
    server.once('error', reject);
  });
}

/** Nothing on stdout but log records, none of them fatal, and no stack trace anywhere. */
function expectNoTrace(p: AgentdProcess): void {
  expect(p.err()).not.toMatch(/\n\s+at /);
  expect(p.out()).not.toMatch(/"level":60|"stack"/);
}

describe('a port in use', () => {
  let held: { port: number; server: Server };
  beforeAll(async () => {
    held = await holdPort();
  });
  afterAll(() => new Promise<void>((resolve) => held.server.close(() => resolve())));

  it('is one line naming the port and the flag to change it, exit code 1', async () => {
    // The port comes from the agent file here (server.port); --web-port would override it.
    const file = await writeAgentFile({ llm: model, storage: { type: 'memory' }, server: { port: held.port } });
    const p = runAgentd(['--agent', file]);
    expect(await p.exited).toBe(1);
    expect(p.err()).toBe(`agentd: port ${held.port} is in use; pick another with --web-port\n`);
    expectNoTrace(p);
  });

  it('is said once by the supervisor of --workers, before any worker starts', async () => {
    const file = await writeAgentFile({
      llm: model,
      storage: { type: 'redis', url: 'redis://127.0.0.1:1' },
      server: { port: held.port },
    });
    const p = runAgentd(['--agent', file, '--workers', '2']);
    expect(await p.exited).toBe(1);
    expect(p.err()).toBe(`agentd: port ${held.port} is in use; pick another with --web-port\n`);
    expect(p.out()).not.toContain('worker');
    expectNoTrace(p);
  });
});

describe('a config with unset environment variables', () => {
  it('names every one of them at once, each with where it is used', async () => {
    const file = await writeAgentFile(
      'llm:\n  provider: openai-compatible\n  baseURL: http://${AGENTD_TEST_HOST_UNSET}/v1\n  model: $AGENTD_TEST_MODEL_UNSET\n  apiKey: ${AGENTD_TEST_KEY_UNSET}\n' +
        'systemPrompt: "for $AGENTD_TEST_SET, $$5"\nmcpServers:\n  fs:\n    type: stdio\n    command: node\n    args: [$AGENTD_TEST_KEY_UNSET]\n',
    );
    const p = runAgentd(['--agent', file, '--web-port', '0'], { AGENTD_TEST_SET: 'set' });
    expect(await p.exited).toBe(1);
    const lines = p.err().trimEnd().split('\n');
    expect(lines[0]).toBe(`agentd: invalid agent config ${file}:`);
    expect(lines.slice(1)).toEqual([
      `  - ${file}:3:3: llm.baseURL: environment variable AGENTD_TEST_HOST_UNSET is not set (referenced at llm.baseURL)`,
      `  - ${file}:4:3: llm.model: environment variable AGENTD_TEST_MODEL_UNSET is not set (referenced at llm.model)`,
      `  - ${file}:5:3: llm.apiKey: environment variable AGENTD_TEST_KEY_UNSET is not set (referenced at llm.apiKey, mcpServers.fs.args[0])`,
    ]);
    expect(p.out()).not.toContain('listening');
    expectNoTrace(p);
  });
});

describe('a mistyped agent file', () => {
  it('names the line, the key, the near miss and the docs, before anything starts (exit 1)', async () => {
    const file = await writeAgentFile('llm:\n  provider: opnai\n  modle: m\nmcpServer: {}\n');
    const p = runAgentd(['--agent', file, '--web-port', '0']);
    expect(await p.exited).toBe(1);
    expect(p.err()).toBe(
      `agentd: invalid agent config ${file}:\n` +
        `  - ${file}:2:3: llm.provider: "opnai" is not one of openai, openai-compatible, ollama, vllm, lmstudio, openrouter, groq, together, deepseek, mistral, gemini, anthropic; did you mean "openai"? (see docs/configuration.md#llm)\n` +
        `  - ${file}:3:3: llm.modle: unknown key "modle"; did you mean "model"? (see docs/configuration.md#llm)\n` +
        `  - ${file}:4:1: mcpServer: unknown key "mcpServer"; did you mean "mcpServers"? (see docs/configuration.md#top-level-keys)\n`,
    );
    expect(p.out()).toBe('');
  });

  it('puts a YAML mistake on its own line, and an unknown option is usage (exit 2)', async () => {
    const file = await writeAgentFile('llm:\n  provider: openai\n   model: m\n');
    const p = runAgentd(['--agent', file]);
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain(`${file}:3:4: not valid YAML: this line is indented more than the key on line 2`);
    const bogus = runAgentd(['--agnet', file]);
    expect(await bogus.exited).toBe(2);
    expect(bogus.err()).toMatch(/^agentd: unknown option --agnet; did you mean --agent\?\n/);
  });
});

describe('agentd connected to its own /mcp', () => {
  const running: AgentdProcess[] = [];
  afterAll(async () => {
    for (const p of running) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  });
  const start = async (args: string[], config: object) => {
    const p = runAgentd([
      '--agent',
      await writeAgentFile({ llm: model, storage: { type: 'memory' }, ...config }),
      ...args,
    ]);
    running.push(p);
    return { p, port: await listeningPort(p) };
  };
  const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });

  it('at runtime: refused with 400 naming the cause, whatever URL reaches it, and nothing is kept', async () => {
    const { port } = await start(['--web-port', '0'], {});
    const base = `http://127.0.0.1:${port}`;
    // Another spelling of the same endpoint: what answers tells, not the URL.
    for (const url of [`${base}/mcp`, `${base}/mcp?via=another-name`]) {
      const { status, body } = await json(
        await fetch(`${base}/api/connect-server`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'myself', config: { type: 'http', baseUrl: url } }),
        }),
      );
      expect(status, url).toBe(400);
      expect(body.error).toEqual({
        code: 'INVALID_REQUEST',
        message: `"myself" (${url}) is this agentd's own /mcp endpoint: agentd cannot be its own tool server (its tools would call back into itself). Connect another agent's /mcp, or remove this server`,
        details: { serverId: 'myself', field: 'config.baseUrl', reason: 'self-connection' },
      });
    }
    const servers = await json(await fetch(`${base}/api/mcp/servers`));
    expect(servers.body.servers).toEqual([]);
    // Another agentd is a tool server like any other.
    const other = await start(['--web-port', '0'], {});
    const connected = await json(
      await fetch(`${base}/api/connect-server`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          name: 'other',
          config: { type: 'http', baseUrl: `http://127.0.0.1:${other.port}/mcp` },
        }),
      }),
    );
    expect(connected.status).toBe(200);
    expect(connected.body.server).toMatchObject({ name: 'other', status: 'connected' });
  });

  it('in the agent file: listed as error naming the cause, not retried, and the service serves on', async () => {
    // A free port first, then agentd on it with itself among its tool servers.
    const first = await start(['--web-port', '0'], {});
    first.p.child.kill('SIGTERM');
    await first.p.exited;
    const { p, port } = await start(['--web-port', String(first.port)], {
      mcpServers: { myself: { type: 'http', baseUrl: `http://127.0.0.1:${first.port}/mcp` } },
    });
    expect(port).toBe(first.port);
    const base = `http://127.0.0.1:${port}`;
    const record = async () =>
      ((await json(await fetch(`${base}/api/mcp/servers`))).body.servers as any[]).find((s) => s.name === 'myself');
    await until(async () => (await record())?.status === 'error', 'the server listed as error');
    expect((await record()).error).toContain(
      `"myself" (http://127.0.0.1:${port}/mcp) is this agentd's own /mcp endpoint`,
    );
    // A retry would come within about a second (the first backoff): none does.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const failures = p
      .out()
      .split('\n')
      .filter((l) => l.includes('"serverId":"myself"') && l.includes('"msg":"MCP server error"'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain("is this agentd's own /mcp endpoint");
    const health = await json(await fetch(`${base}/api/health`));
    expect(health.body).toMatchObject({ status: 'healthy', agent: { connectedServers: 0 } });
  });
});

describe.skipIf(!hasRedisServer())('agentd --workers connected to its own /mcp', { timeout: 120_000 }, () => {
  it('is refused whichever worker answers: the workers are one service', async () => {
    const redis = await startRedis();
    const storage = { type: 'redis', url: redis.url, keyPrefix: `self${randomUUID()}:` };
    const p = runAgentd([
      '--agent',
      // uWebSockets.js counts a closed connection up to 15 s after the fact (src/http/engine/uws-ledger.ts): six
      // attempts in a row, each opening a few connections of its own, would reach the default cap of 10.
      await writeAgentFile({
        llm: model,
        storage,
        server: { limits: { rest: { points: 10_000 }, connectionsPerIp: 100 } },
      }),
      '--web-port',
      '0',
      '--workers',
      '2',
    ]);
    try {
      await until(
        () =>
          p
            .out()
            .split('\n')
            .filter((l) => l.includes('"agent ready"')).length === 2,
        () => `two workers ready:\n${p.out()}${p.err()}`,
        { timeout: 60_000 },
      );
      const port = Number(/"supervisor":true.*"port":(\d+)/.exec(p.out())?.[1]);
      const base = `http://127.0.0.1:${port}`;
      // Fresh connections, spread by the kernel over the workers, each connecting to the shared port.
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${base}/api/connect-server`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Connection: 'close' },
          body: JSON.stringify({ name: `myself-${i}`, config: { type: 'http', baseUrl: `${base}/mcp` } }),
        });
        const body = (await res.json()) as { error?: { details?: { reason?: string } } };
        expect([res.status, body.error?.details?.reason], `attempt ${i}`).toEqual([400, 'self-connection']);
      }
    } finally {
      p.child.kill('SIGTERM');
      await p.exited;
      await redis.stop();
    }
  });
});
