/**
 * A desktop MCP client that starts `agentd --mcp-transport stdio --agent ./agent.yml` while another agentd serves that
 * file over HTTP: the storage folder is the other's, and the client (the real MCP SDK client over stdio) gets an
 * answer to its `initialize` that names the folder, the process holding it and what to do, not "Connection closed".
 */
import { join } from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd, writeAgentFile } from '../support/agentd-process.ts';
import { AGENTD_BIN } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';

describe('--mcp-transport stdio beside an agentd serving the same agent file', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(() => sim.close());

  it('answers initialize with an error naming the folder, the process holding it and what to do', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'agentd-beside-')), 'sessions');
    const agent = await writeAgentFile({
      name: 'beside',
      llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'sim-model' },
      storage: { type: 'jsonl', dir },
    });
    const served = runAgentd(['--agent', agent, '--web-port', '0']);
    try {
      await listeningPort(served);
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [AGENTD_BIN, '--mcp-transport', 'stdio', '--agent', agent],
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testRunEnv() },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      const failure = await client.connect(transport).then(
        () => undefined,
        (e: unknown) => e as { code?: number; message: string },
      );
      await client.close();
      expect(failure?.code).toBe(-32000);
      const message = failure?.message ?? '';
      expect(message).toContain(`storage directory ${dir} is in use by another agentd`);
      expect(message).toContain(`process ${served.child.pid}`);
      expect(message).toContain('connect your MCP client to its /mcp (http://127.0.0.1:3001/mcp) instead');
      expect(message).toContain(`stop process ${served.child.pid}, or give this agent file a storage.dir of its own`);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });
});
