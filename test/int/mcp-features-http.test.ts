/** Issue 25 over Streamable HTTP: server-everything's progress, resources, prompts, logs, roots and sampling through the MCP service. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEvents } from '../../src/app.ts';
import { SamplingRefused, type Sampler, type SamplingRequest } from '../../src/tools/server-asks.ts';
import { until } from '../support/wait.ts';
import { harness, http, startEverythingHttp, textOf, type Harness } from './mcp-helpers.ts';

describe('MCP features over Streamable HTTP', () => {
  let server: Awaited<ReturnType<typeof startEverythingHttp>>;
  let h: Harness;
  const progress: AppEvents['mcp.toolProgress'][] = [];
  const logs: AppEvents['mcp.serverLog'][] = [];

  beforeAll(async () => {
    server = await startEverythingHttp('streamableHttp');
    h = harness({
      remote: http(`http://127.0.0.1:${server.port}/mcp`, {
        logLevel: 'info',
        roots: ['file:///tmp/agentd-http-root'],
      }),
      asker: http(`http://127.0.0.1:${server.port}/mcp`, { sampling: 'ask' }),
    });
    h.bus.on('mcp.toolProgress', (e) => void progress.push(e.payload));
    h.bus.on('mcp.serverLog', (e) => void logs.push(e.payload));
    await h.service.start();
  });
  afterAll(async () => {
    await h.stop();
    await server.stop();
  });

  it('relays every progress notification of a call, the last one included', async () => {
    const target = { sessionId: 's', callId: 'c1' };
    await h.bus.execute('mcp.executeTool', {
      serverId: 'remote',
      toolName: 'trigger-long-running-operation',
      args: { duration: 0.3, steps: 3 },
      progress: target,
    });
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(progress[0]).toEqual({
      ...target,
      serverId: 'remote',
      toolName: 'trigger-long-running-operation',
      progress: 1,
      total: 3,
    });
  });

  it('lists and reads resources, gets prompts, relays logs, offers roots', async () => {
    const { resourceTemplates } = await h.bus.execute('mcp.listResources', { serverId: 'remote' });
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('demo://resource/dynamic/blob/{resourceId}');
    const read = await h.bus.execute('mcp.readResource', { serverId: 'remote', uri: 'demo://resource/dynamic/text/3' });
    expect(read.contents[0]?.text).toContain('Resource 3');
    const prompt = await h.bus.execute('mcp.getPrompt', {
      serverId: 'remote',
      name: 'args-prompt',
      args: { city: 'Oslo' },
    });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: "What's weather in Oslo?" } }]);
    await h.bus.execute('mcp.subscribeResource', {
      serverId: 'remote',
      uri: 'demo://resource/dynamic/text/3',
      subscribe: true,
      subscriber: 'tester',
    });
    await until(
      () => logs.some((l) => String(l.data).includes('Subscribe Resource request')),
      'the subscription was logged by the server',
    );
    const roots = await h.bus.execute('mcp.executeTool', { serverId: 'remote', toolName: 'get-roots-list', args: {} });
    expect(textOf(roots.data)).toContain('file:///tmp/agentd-http-root');
  });

  it("routes a sampling request of a call to the call's sampler, marked for approval under ask, and its refusal back to the server", async () => {
    const asked: SamplingRequest[] = [];
    const sampler: Sampler = (request, options) => {
      asked.push(request);
      expect(options.signal.aborted).toBe(false);
      if (request.messages.some((m) => m.content.includes('refuse-me')))
        return Promise.reject(new SamplingRefused('the user denied the sampling request'));
      return Promise.resolve({ text: 'sampled over http', model: 'sim', stopReason: 'endTurn' });
    };
    const call = (prompt: string) =>
      h.bus.execute('mcp.callModelTool', {
        name: 'trigger-sampling-request',
        args: { prompt, maxTokens: 20 },
        sampler,
      });
    const answered = await call('http-sampling-1');
    expect(answered.success, JSON.stringify(answered)).toBe(true);
    expect(JSON.stringify(answered)).toContain('sampled over http');
    expect(asked[0]).toMatchObject({ serverId: 'asker', needsApproval: true, maxTokens: 20 });
    const refused = await call('refuse-me');
    expect(JSON.stringify(refused)).toContain('the user denied the sampling request');
  });
});
