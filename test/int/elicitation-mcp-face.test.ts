/**
 * The agent over MCP on stdio asks its own client to approve a tool call through elicitation
 * (issue 25, item 9): a desktop client that declared form elicitation answers the approval during
 * its `chat_with_agent` call; approve runs the tool, deny does not.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { until } from '../support/wait.ts';
import { fixturePath } from './mcp-helpers.ts';
import { AGENTD_BIN } from '../support/paths.ts';

const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';

describe('approvals asked of the /mcp client through elicitation (stdio)', () => {
  let sim: Simulator;
  let dir: string;
  let client: Client;
  let stderr = '';
  const asked: string[] = [];
  /** `hold`: the question is left open until withdrawn. */
  let decision = 'approve';
  let withdrawn = false;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    dir = await mkdtemp(join(tmpdir(), 'agentd-mcp-elicit-'));
    const agent = join(dir, 'agent.yml');
    await writeFile(
      agent,
      `name: asking-agent\nllm:\n  provider: openai-compatible\n  baseURL: ${sim.url}\n  model: sim-model\nstorage:\n  type: memory\n` +
        `mcpServers:\n  echo:\n    type: stdio\n    command: ${process.execPath}\n    args: [${fixturePath('echo-server')}]\n` +
        `toolPolicy:\n  rules:\n    - { server: echo, tool: echo, action: ask }\n`,
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [AGENTD_BIN, '--mcp-transport', 'stdio', '--agent', agent, '--log-level', 'info'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'desktop', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      asked.push(request.params.message);
      if (decision === 'hold')
        await new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve((withdrawn = true))));
      return { action: 'accept', content: { decision } };
    });
    await client.connect(transport).catch((err: unknown) => {
      throw new Error(`stdio agentd failed: ${String(err)}\n${stderr}`);
    });
    // agentd answers at once; its tool server connects behind (logged once attempted).
    await until(
      () => stderr.includes('MCP servers attempted'),
      () => `the tool server to connect:\n${stderr}`,
    );
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('approve: the call runs and the reply has its result', async () => {
    const reply = await client.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"approved-by-elicitation"}]]' },
    });
    expect(asked.at(-1)).toContain('"echo" on "echo"');
    expect(textOf(reply)).toContain('fixture echo: approved-by-elicitation');
  }, 30_000);

  it('deny: the call never runs', async () => {
    decision = 'deny';
    const before = asked.length;
    const reply = await client.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"denied-by-elicitation"}]]' },
    });
    expect(asked.length).toBe(before + 1);
    expect(textOf(reply)).not.toContain('fixture echo: denied-by-elicitation');
    expect(textOf(reply)).toContain('mcp-elicitation');
  }, 30_000);

  it('a question whose call is cancelled meanwhile is withdrawn from the client', async () => {
    decision = 'hold';
    const before = asked.length;
    const reply = client.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"never"}]]', sessionId: 'held' },
    });
    await until(() => asked.length === before + 1, 'the client is asked');
    // The desktop client's user cancels the turn elsewhere: reset_conversation of the same session denies its calls.
    await client.callTool({ name: 'reset_conversation', arguments: { sessionId: 'held' } });
    await until(() => withdrawn, 'the open question is withdrawn');
    expect(textOf(await reply)).not.toContain('fixture echo: never');
  }, 30_000);
});
