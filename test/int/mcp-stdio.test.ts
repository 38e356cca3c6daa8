/**
 * `--mcp-transport stdio`, as a desktop MCP client runs agentd: `initialize` is answered at once whatever the
 * tool servers do, their tools appear (with `notifications/tools/list_changed`) as they connect, and the end of
 * stdin ends agentd at any moment, start-up included, leaving no tool server behind.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { AGENTD_BIN } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';
import { fixturePath } from './mcp-helpers.ts';

const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';
const env = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testRunEnv() });

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * An agent file whose tool server `slow` starts only once `<gate>/open` exists (it writes `<gate>/pid` first),
 * and whose `echo` is the fixture echo server; both exposed on the MCP face.
 */
async function agentFile(modelUrl: string, servers: 'slow' | 'slow+echo'): Promise<{ agent: string; gate: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-stdio-'));
  const gate = join(dir, 'gate');
  await mkdir(gate);
  const slow = `  slow:\n    type: stdio\n    command: ${process.execPath}\n    args: [${fixturePath('gated-server')}, ${gate}]\n`;
  const echo = `  echo:\n    type: stdio\n    command: ${process.execPath}\n    args: [${fixturePath('echo-server')}]\n`;
  const agent = join(dir, 'agent.yml');
  await writeFile(
    agent,
    `name: stdio-agent\nllm:\n  provider: openai-compatible\n  baseURL: ${modelUrl}\n  model: sim-model\nstorage:\n  type: memory\n` +
      `mcpServers:\n${slow}${servers === 'slow+echo' ? echo : ''}server:\n  mcp:\n    exposeTools: true\n`,
  );
  return { agent, gate };
}

describe('--mcp-transport stdio', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(() => sim.close());

  it('answers initialize while a tool server is still starting, and lists its tools with list_changed once it is up', async () => {
    const { agent, gate } = await agentFile(sim.url, 'slow+echo');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [AGENTD_BIN, '--mcp-transport', 'stdio', '--agent', agent, '--log-level', 'info'],
      env: env(),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    try {
      await client.connect(transport).catch((err: unknown) => {
        throw new Error(`stdio agentd failed: ${String(err)}\n${stderr}`);
      });
      // Answered while `slow` still waits for its gate: it has not answered agentd's initialize.
      expect(existsSync(join(gate, 'open'))).toBe(false);
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      // (Not asserted: which tools are listed yet — the fast fixture may be up already on a loaded machine.)
      // A turn asked now waits for the tool servers' first attempts (it would run without their tools otherwise).
      const early = client.callTool({ name: 'chat_with_agent', arguments: { message: 'early' } });
      // `echo` connects on its own; then the gate opens and `slow` connects: each change is announced.
      await expect.poll(names, { timeout: 60_000 }).toContain('fail');
      const before = changes;
      expect(before).toBeGreaterThan(0);
      await writeFile(join(gate, 'open'), '');
      expect(textOf(await early)).toBe('You said: early');
      await expect.poll(() => changes, { timeout: 60_000 }).toBeGreaterThan(before);
      await expect
        .poll(async () => (await names()).filter((n) => n.endsWith('echo')).length, { timeout: 60_000 })
        .toBe(2);
      expect(stderr).toContain('serving MCP on stdio');
    } finally {
      await client.close();
    }
  }, 120_000);

  it('exits when stdin ends during start-up, leaving no tool server behind', async () => {
    const { agent, gate } = await agentFile(sim.url, 'slow');
    const args = [AGENTD_BIN, '--mcp-transport', 'stdio', '--agent', agent, '--log-level', 'info'];
    const child = spawn(process.execPath, args, {
      env: env(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // The tool server runs, and will not answer agentd's initialize: agentd is mid-start.
    const pidFile = join(gate, 'pid');
    const readPid = async () => (existsSync(pidFile) ? Number(await readFile(pidFile, 'utf8')) : 0);
    await expect.poll(readPid, { timeout: 60_000 }).toBeGreaterThan(0); // 0 would be kill(0): our own group
    const toolServer = await readPid();
    expect(isAlive(toolServer)).toBe(true);
    child.stdin.end();
    expect(await exited, stderr).toBe(0);
    // It left mid-start, not once the tool server's connection attempt had timed out (then logged as attempted).
    expect(stderr).toContain('stdin closed during start-up');
    expect(stderr).not.toContain('MCP servers attempted');
    await expect.poll(() => isAlive(toolServer), { timeout: 10_000 }).toBe(false);
  }, 120_000);
});
