/**
 * The installed package's commands that serve (package.test.ts says how the package is made and shared): the demo,
 * the desktop-client stdio mode, an agent file served with the docs' WebSocket client, the node engine without the
 * optional native one, and the docs' agent-to-agent pair.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd } from '../support/agentd-process.ts';
import { installed, runCommand, scratch } from '../support/installed-package.ts';
import { ROOT } from '../support/paths.ts';

const run = promisify(execFile);
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  optionalDependencies?: Record<string, string>;
};
let sim: Simulator | undefined;

/** Runs the installed `agentd` in `cwd`. */
async function agentd(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  return runCommand(args, (await installed()).env, opts);
}

const folder = (name: string): Promise<string> => scratch(name);

/** The install is shared: a file may wait here for another to make it (minutes when npm fetches from the registry). */
const INSTALL_MS = 600_000;
beforeAll(() => installed(), INSTALL_MS);
afterAll(async () => {
  await sim?.close();
});

describe('the installed agentd command, serving', () => {
  it('demo runs the offline demo from the installed package', async () => {
    const data = await folder('demo-data');
    const { code, out, err } = await agentd(['demo'], {
      cwd: await folder('demo'),
      env: {
        AGENTD_DEMO_EXIT: '1',
        AGENTD_DEMO_PORT: '0',
        AGENTD_DEMO_SIM_PORT: '0',
        AGENTD_DEMO_TOKENS_PER_SEC: '0',
        AGENTD_DEMO_DATA: data,
      },
    });
    expect(code, `${out}\n${err}`).toBe(0);
    expect(out).toMatch(/MCP server\s+filesystem: connected/);
    expect(out).toMatch(/MCP server\s+memory: connected/);
    expect(out).toContain('agent › Hi! I am the agentd demo agent.');
    // What the demo refers to is in the package, by a path that exists.
    const directives = /obeys \[\[directives\]\]: see (\S+README\.md)/.exec(out)?.[1];
    expect(directives && existsSync(directives), out).toBe(true);
  });

  it('speaks MCP on stdio as the desktop-client config in docs/mcp-server.md runs it', async () => {
    const { env } = await installed();
    const dir = await folder('stdio');
    const agent = join(dir, 'agent.yml');
    await writeFile(agent, 'llm: { provider: openai-compatible, baseURL: "http://127.0.0.1:9/v1", model: m }\n');
    const transport = new StdioClientTransport({
      command: 'agentd',
      args: ['--agent', agent, '--mcp-transport', 'stdio'],
      env: env as Record<string, string>,
      cwd: dir, // its default storage folder is in the run's XDG_DATA_HOME (env: testRunEnv), whatever this folder
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('chat_with_agent');
    } finally {
      await client.close();
    }
  });

  it('serves an agent file: probes, health with its engine, and one message answered', async () => {
    sim = await startSimulator({ port: 0, record: false });
    const { env, prefix } = await installed();
    const dir = await folder('serve');
    await writeFile(
      join(dir, 'agent.yml'),
      `llm: { provider: openai-compatible, baseURL: "${sim.url}", model: sim-model }\nstorage: { type: jsonl, dir: ./sessions }\n`,
    );
    const agentd = runAgentd(['--web-port', '0'], env, { command: ['agentd'], cwd: dir });
    try {
      const port = await listeningPort(agentd);
      const base = `http://127.0.0.1:${port}`;
      await expect.poll(async () => (await fetch(`${base}/api/health/ready`)).status, { timeout: 60_000 }).toBe(200);
      expect((await fetch(`${base}/api/health/live`)).status).toBe(200);
      const health = (await (await fetch(`${base}/api/health`)).json()) as { engine: string; version: string };
      expect(health.version).toBe(pkg.version);
      expect(['uws', 'node']).toContain(health.engine);
      expect(agentd.out()).toContain(`"engine":"${health.engine}"`);
      // The API docs page, with the swagger-ui the package ships (it installs no swagger-ui package).
      expect((await fetch(`${base}/api/docs`)).status).toBe(200);
      const bundle = await fetch(`${base}/api/docs/swagger-ui-bundle.js`);
      expect(bundle.status).toBe(200);
      expect(await bundle.text()).toContain('SwaggerUIBundle');
      // The console's markdown libraries, shipped the same way (marked and dompurify are devDependencies).
      for (const [file, name] of [
        ['marked.js', 'Marked'],
        ['purify.js', 'DOMPurify'],
      ]) {
        const lib = await fetch(`${base}/console/${file}`);
        expect(lib.status).toBe(200);
        expect(await lib.text()).toContain(name);
      }
      const reply = await fetch(`${base}/api/message-sync`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'hello package' }),
      });
      expect(await reply.json()).toMatchObject({ success: true, response: 'You said: hello package' });
      expect(existsSync(join(dir, 'sessions'))).toBe(true);
      // The docs' WebSocket client, as the docs run it from the installed package.
      const chat = join(prefix, 'lib', 'node_modules', pkg.name, 'docs', 'clients', 'chat.mjs');
      const client = await run(process.execPath, [chat, 'hello docs'], {
        env: { ...env, AGENTD_URL: `ws://127.0.0.1:${port}/` },
        timeout: 60_000,
      });
      expect(client.stdout).toContain('You said: hello docs');
    } finally {
      agentd.child.kill('SIGTERM');
    }
    expect(await agentd.exited).toBe(0);
  });

  it('runs on the node engine without its optional native engine, as `--omit=optional` installs it, and says why', async () => {
    const { env } = await installed();
    expect(pkg.optionalDependencies).toHaveProperty(['uWebSockets.js']);
    // The installed package, hard-linked, less the optional package: the tree `npm install --omit=optional` leaves.
    const installedPackage = join((await installed()).prefix, 'lib', 'node_modules', pkg.name);
    const slim = join(await folder('omit-optional'), pkg.name);
    await run('cp', ['-al', installedPackage, slim]);
    await rm(join(slim, 'node_modules', 'uWebSockets.js'), { recursive: true, force: true });
    const dir = await folder('omit-optional-serve');
    await writeFile(
      join(dir, 'agent.yml'),
      'llm: { provider: openai-compatible, baseURL: "http://127.0.0.1:9/v1", model: m }\n',
    );
    const agentd = runAgentd(
      ['--web-port', '0', '--log-format', 'json'],
      { ...env, AGENTD_ENGINE: 'auto' },
      {
        command: [process.execPath, join(slim, 'bin', 'agentd.js')],
        cwd: dir,
      },
    );
    try {
      const port = await listeningPort(agentd);
      const health = (await (await fetch(`http://127.0.0.1:${port}/api/health`)).json()) as { engine: string };
      expect(health.engine).toBe('node');
      expect(agentd.out()).toContain('uWebSockets.js is not installed: using the node engine');
    } finally {
      agentd.child.kill('SIGTERM');
    }
    expect(await agentd.exited).toBe(0);
  });

  it("runs the agent-to-agent pair with docs/mcp-server.md's commands: the concierge lists the researcher's chat_with_agent", async () => {
    const { env, prefix } = await installed();
    const docs = await readFile(join(ROOT, 'docs', 'mcp-server.md'), 'utf8');
    const block = /## Agent to agent[\s\S]*?```sh\n([\s\S]*?)```/.exec(docs)?.[1] ?? '';
    const [where, backend, front] = block.split('\n').map((line) => line.replace(/\s+#.*$/, ''));
    expect([backend, front]).toEqual([
      expect.stringMatching(/ agentd --agent "\$examples\/a2a-backend\.yml"$/),
      expect.stringMatching(/ agentd --agent "\$examples\/a2a-front\.yml"$/),
    ]);
    // The docs' folder line, with npm's global root the test's prefix.
    const shellEnv = { ...env, npm_config_prefix: prefix };
    const shown = await run('bash', ['-c', `${where}\necho "$examples"`], { env: shellEnv });
    const examples = shown.stdout.trim();
    expect(examples).toBe(join(prefix, 'lib', 'node_modules', pkg.name, 'agents', 'examples'));
    // The pair agrees on the researcher's port; a test serves on free ports, so the concierge's copy names the one
    // the researcher got.
    const frontFile = await readFile(join(examples, 'a2a-front.yml'), 'utf8');
    const docsPort = /^ {2}port: (\d+)$/m.exec(await readFile(join(examples, 'a2a-backend.yml'), 'utf8'))?.[1];
    expect(frontFile).toContain(`baseUrl: http://127.0.0.1:${docsPort}/mcp`);
    /** The docs' command line, run by bash as it stands with `--web-port 0` added. */
    const start = (line: string, cwd: string, folderLine = where!) =>
      runAgentd([], shellEnv, {
        command: ['bash', '-c', `${folderLine}\n${line.replace(' agentd ', ' exec agentd ')} --web-port 0`],
        cwd,
      });
    const researcher = start(backend!, await folder('researcher'));
    const started = [researcher];
    try {
      const port = await listeningPort(researcher);
      const copy = await folder('concierge-file');
      await writeFile(join(copy, 'a2a-front.yml'), frontFile.replace(`:${docsPort}/mcp`, `:${port}/mcp`));
      const concierge = start(front!, await folder('concierge'), `examples=${copy}`);
      started.push(concierge);
      const base = `http://127.0.0.1:${await listeningPort(concierge)}`;
      await expect
        .poll(
          async () =>
            ((await (await fetch(`${base}/api/mcp/servers`)).json()) as { servers: { name: string; status: string }[] })
              .servers,
          { timeout: 60_000, interval: 100 },
        )
        .toEqual([expect.objectContaining({ name: 'researcher', status: 'connected' })]);
      const tools = (await (await fetch(`${base}/api/mcp/servers/researcher/tools`)).json()) as {
        tools: { name: string }[];
      };
      expect(tools.tools.map((t) => t.name)).toContain('chat_with_agent');
    } finally {
      for (const p of started) p.child.kill('SIGTERM');
    }
    for (const p of started) expect(await p.exited, p.err()).toBe(0);
  });
});
