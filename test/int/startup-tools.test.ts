/**
 * A message sent while agentd is still starting its tool servers (`/api/health/ready` not yet 200) waits for them:
 * its model step lists the tools once their first attempts are over, so the turn calls them instead of running
 * without them and being stored as a success (issue 72).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { api } from '../support/messaging.ts';
import { fixturePath } from '../support/paths.ts';
import { until } from '../support/wait.ts';

describe('a message sent during start-up', { timeout: 120_000 }, () => {
  let sim: Simulator;
  let dir: string;
  let agentd: AgentdProcess | undefined;
  beforeAll(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-startup-tools-'));
  });
  afterAll(async () => {
    agentd?.child.kill('SIGKILL');
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('waits for the tool servers, then calls its tool', async () => {
    const gate = join(dir, 'gate');
    await mkdir(gate);
    agentd = runAgentd([
      '--agent',
      await writeAgentFile({
        llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k' },
        storage: { type: 'memory' },
        // Answers nothing until `<gate>/open` exists: agentd is up, its tool server still starting.
        mcpServers: { slow: { type: 'stdio', command: process.execPath, args: [fixturePath('gated-server'), gate] } },
      }),
      '--web-port',
      '0',
    ]);
    const url = `http://127.0.0.1:${await listeningPort(agentd)}`;
    expect((await api(url, 'GET', '/api/health/ready')).status).toBe(503);
    const sent = api(url, 'POST', '/api/message-sync', {
      sessionId: 'early',
      message: '[[tool:echo {"message":"early"}]]',
    });
    // The turn has started (its message is stored) and waits; then the server comes up.
    const started = async () => ((await api(url, 'GET', '/api/sessions/early/history')).body.events ?? []).length > 0;
    await until(started, 'the message stored');
    await writeFile(join(gate, 'open'), '');
    const answer = await sent;
    expect(answer.status).toBe(200);
    const history = (await api(url, 'GET', '/api/sessions/early/history')).body.events as {
      event: string;
      data: Record<string, unknown>;
    }[];
    const result = history.find((f) => f.event === 'toolResult');
    expect(result?.data).toMatchObject({ toolName: 'echo', success: true });
  });
});
