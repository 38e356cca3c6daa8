/**
 * agentd as an MCP client against servers of the 2026-07-28 era (issue 25, item 8, client side),
 * built with the SDK v2 server over HTTP: one that also serves 2025-era clients (the SDK's default)
 * and one that serves 2026-07-28 only (`legacy: 'reject'`). src/tools connects with the SDK v2 client
 * in `auto` negotiation (src/tools/mcp/eras.ts): its `server/discover` probe finds both in the 2026-07-28
 * era (docs/tool-servers.md, "Protocol eras of tool servers"); test/int/mcp-client-negotiation.test.ts covers every way a server
 * refuses a 2025-era `initialize` and each `protocolVersion` setting.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, inputRequired, LOG_LEVEL_META_KEY, Server } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SamplingRefused,
  type ElicitationAsk,
  type Sampler,
  type SamplingRequest,
} from '../../src/tools/server-asks.ts';
import { until } from '../support/wait.ts';
import { fixture, harness, http, rejection, textOf, type Harness } from './mcp-helpers.ts';

/** A 2026-07-28 tool server with one tool, `greet`, served by the SDK v2 handler on a loopback port. */
async function startModernServer(
  legacy: 'stateless' | 'reject',
): Promise<{ url: string; addTool(name: string): void; listening(): number; close(): Promise<void> }> {
  const added: string[] = [];
  let listening = 0;
  const handler = createMcpHandler(
    () => {
      const server = new Server(
        { name: `modern-${legacy}`, version: '1.0.0' },
        { capabilities: { tools: { listChanged: true }, resources: {}, prompts: {}, logging: {} } },
      );
      server.setRequestHandler('tools/list', () => ({
        tools: [
          {
            name: 'greet',
            description: 'Greets',
            inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
          },
          {
            name: 'wait',
            description: 'Answers after `ms`',
            inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
          },
          { name: 'meta', description: 'Echoes the request _meta', inputSchema: { type: 'object' } },
          {
            name: 'ask',
            description: 'Asks the user a name (input_required), then greets',
            inputSchema: { type: 'object' },
          },
          { name: 'sample', description: "Asks the host's model (input_required)", inputSchema: { type: 'object' } },
          { name: 'roots', description: "Lists the host's roots (input_required)", inputSchema: { type: 'object' } },
          {
            name: 'steps',
            description: 'Sends three progress notifications and two logs (debug, info); answers the log level asked',
            inputSchema: { type: 'object' },
          },
          ...added.map((name) => ({ name, description: 'Added at runtime', inputSchema: { type: 'object' as const } })),
        ],
      }));
      server.setRequestHandler('resources/list', () => ({
        resources: [{ uri: 'memo://one', name: 'one', mimeType: 'text/plain' }],
      }));
      server.setRequestHandler('resources/templates/list', () => ({
        resourceTemplates: [{ uriTemplate: 'memo://{id}', name: 'memo' }],
      }));
      server.setRequestHandler('resources/read', (request) => ({
        contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: `memo at ${request.params.uri}` }],
      }));
      server.setRequestHandler('prompts/list', () => ({
        prompts: [{ name: 'hello', arguments: [{ name: 'who', required: true }] }],
      }));
      server.setRequestHandler('prompts/get', (request) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${request.params.arguments?.who}` } }],
      }));
      server.setRequestHandler('tools/call', async (request, ctx) => {
        const { name, arguments: args, _meta } = request.params;
        const answers = ctx.mcpReq.inputResponses;
        const answered = (key: string) => (answers?.[key] === undefined ? undefined : JSON.stringify(answers[key]));
        if (name === 'ask' && !answers) {
          return inputRequired({
            inputRequests: {
              name: inputRequired.elicit({
                message: 'Your name?',
                requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
              }),
            },
          });
        }
        if (name === 'sample' && !answers) {
          return inputRequired({
            inputRequests: {
              reply: inputRequired.createMessage({
                messages: [{ role: 'user', content: { type: 'text', text: 'modern-sampling-question' } }],
                maxTokens: 30,
              }),
            },
          });
        }
        if (name === 'roots' && !answers) return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
        if (name === 'ask' || name === 'sample' || name === 'roots')
          return {
            content: [
              {
                type: 'text',
                text: answered(name === 'ask' ? 'name' : name === 'sample' ? 'reply' : 'roots') ?? 'none',
              },
            ],
          };
        if (name === 'steps') {
          const token = _meta?.progressToken;
          for (let i = 1; i <= 3 && token !== undefined; i++)
            await ctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken: token, progress: i, total: 3 },
            });
          // The SDK logs only at or above the level the request's _meta asked for (none asked: no logs at all).
          await ctx.mcpReq.log('debug', 'modern-debug-line');
          await ctx.mcpReq.log('info', 'modern-log-line');
          const asked = (ctx.mcpReq.envelope as { [LOG_LEVEL_META_KEY]?: string } | undefined)?.[LOG_LEVEL_META_KEY];
          return { content: [{ type: 'text', text: `stepped (log level ${asked ?? 'none'})` }] };
        }
        if (name === 'wait') await new Promise((resolve) => setTimeout(resolve, Number(args?.ms)).unref());
        const text =
          name === 'meta' ? JSON.stringify(_meta ?? {}) : name === 'wait' ? 'waited' : `Hello, ${String(args?.name)}`;
        return { content: [{ type: 'text', text }] };
      });
      return server;
    },
    { legacy },
  );
  const web: HttpServer = createServer((req, res) => {
    if (req.headers['mcp-method'] === 'subscriptions/listen') {
      listening++;
      res.once('close', () => listening--);
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const body = req.method === 'POST' ? new Uint8Array(Buffer.concat(chunks)) : undefined;
      void handler
        .fetch(
          new Request(`http://127.0.0.1${req.url ?? '/'}`, {
            method: req.method ?? 'GET',
            headers,
            ...(body && { body }),
          }),
        )
        .then(async (response) => {
          // Streamed, not buffered: a subscriptions/listen answer stays open.
          res.writeHead(response.status, Object.fromEntries(response.headers));
          if (response.body) for await (const chunk of response.body) res.write(chunk);
          res.end();
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  const { port } = web.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    /** The subscriptions/listen streams open now. */
    listening: () => listening,
    addTool(name) {
      added.push(name);
      handler.notify.toolsChanged();
    },
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve) => web.close(() => resolve()));
    },
  };
}

describe('agentd connecting to 2026-07-28 tool servers', () => {
  let dual: Awaited<ReturnType<typeof startModernServer>>;
  let modernOnly: Awaited<ReturnType<typeof startModernServer>>;
  let h: Harness;
  beforeAll(async () => {
    [dual, modernOnly] = await Promise.all([startModernServer('stateless'), startModernServer('reject')]);
    h = harness({ dual: http(dual.url) });
    await h.service.start();
  });
  afterAll(async () => {
    await h.stop();
    await Promise.all([dual.close(), modernOnly.close()]);
  });

  it('connects to a server that serves both eras (in the 2026-07-28 era it offers) and calls its tool', async () => {
    expect((await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'dual')).toMatchObject({
      status: 'connected',
      protocolVersion: '2026-07-28',
    });
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'dual',
      toolName: 'greet',
      args: { name: 'dual' },
    });
    expect(textOf(result.data)).toBe('Hello, dual');
  });

  it('connects to a server that serves 2026-07-28 only (in that era, found by server/discover)', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'modern', config: http(modernOnly.url) });
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'modern',
      toolName: 'greet',
      args: { name: 'modern' },
    });
    expect(textOf(result.data)).toBe('Hello, modern');
    const record = (await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'modern');
    expect(record).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
  });

  it('calls a modern tool the way the model does, with arguments and the hop count in _meta', async () => {
    const names = (await h.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    const greet = names.find((n) => n.includes('modern') && n.includes('greet')) ?? 'greet';
    const meta = names.find((n) => n.includes('modern') && n.includes('meta')) ?? 'meta';
    expect(await h.bus.execute('mcp.callModelTool', { name: greet, args: { name: 'model' } })).toMatchObject({
      success: true,
      text: 'Hello, model',
    });
    const echoed = await h.bus.execute('mcp.callModelTool', { name: meta, args: {}, hops: 2 });
    expect(echoed.success).toBe(true);
    expect(JSON.stringify(JSON.parse(echoed.text))).toContain('2');
  });

  it('lists and reads the resources of a modern server, and gets its prompts', async () => {
    const listed = await h.bus.execute('mcp.listResources', { serverId: 'modern' });
    expect(listed.resources.map((r) => r.uri)).toEqual(['memo://one']);
    expect(listed.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['memo://{id}']);
    const read = await h.bus.execute('mcp.readResource', { serverId: 'modern', uri: 'memo://one' });
    expect(read.contents[0]?.text).toBe('memo at memo://one');
    const prompt = await h.bus.execute('mcp.getPrompt', { serverId: 'modern', name: 'hello', args: { who: 'Ada' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }]);
  });

  it("answers a modern server's input_required questions through the call's session: elicitation, sampling and roots", async () => {
    await h.bus.execute('mcp.connectServer', {
      name: 'asking',
      config: http(modernOnly.url, { sampling: 'allow', roots: ['file:///srv/modern-root'] }),
    });
    const record = (await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'asking');
    expect(record?.capabilities?.client).toMatchObject({ elicitation: {}, sampling: {}, roots: {} });
    const names = (await h.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    const tool = (name: string) => names.find((n) => n.includes('asking') && n.endsWith(name)) ?? name;
    const asked: ElicitationAsk[] = [];
    const elicit = {
      sessionId: 's',
      elicit: (ask: ElicitationAsk) => (
        asked.push(ask),
        Promise.resolve({ action: 'accept' as const, content: { name: 'Grace' } })
      ),
    };
    const answered = await h.bus.execute('mcp.callModelTool', { name: tool('ask'), args: {}, elicit });
    expect(asked).toMatchObject([{ serverId: 'asking', mode: 'form', message: 'Your name?' }]);
    expect(answered).toMatchObject({ success: true });
    expect(answered.text).toContain('"name":"Grace"');

    const sampled: SamplingRequest[] = [];
    const sampler: Sampler = (request) => (
      sampled.push(request),
      Promise.resolve({ text: 'modern sampled answer', model: 'sim', stopReason: 'endTurn' })
    );
    const sample = await h.bus.execute('mcp.callModelTool', { name: tool('sample'), args: {}, sampler });
    expect(sampled).toMatchObject([
      { serverId: 'asking', messages: [{ role: 'user', content: 'modern-sampling-question' }], maxTokens: 30 },
    ]);
    expect(sample.text).toContain('modern sampled answer');
    const refused = await h.bus.execute('mcp.callModelTool', {
      name: tool('sample'),
      args: {},
      sampler: () => Promise.reject(new SamplingRefused('the user denied the sampling request')),
    });
    expect(refused.success).toBe(false);

    const roots = await h.bus.execute('mcp.callModelTool', { name: tool('roots'), args: {} });
    expect(roots.text).toContain('file:///srv/modern-root');
  });

  it('relays the progress and logs of a modern tool call (the log level asked in each request)', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'chatty', config: http(modernOnly.url, { logLevel: 'info' }) });
    await h.bus.execute('mcp.connectServer', { name: 'mute', config: http(modernOnly.url) });
    const progress: number[] = [];
    const logs: { serverId: string; level: string; data: unknown }[] = [];
    const offProgress = h.bus.on(
      'mcp.toolProgress',
      (e) => void (e.payload.serverId === 'chatty' && progress.push(e.payload.progress)),
    );
    const offLogs = h.bus.on(
      'mcp.serverLog',
      (e) => void logs.push({ serverId: e.payload.serverId, level: e.payload.level, data: e.payload.data }),
    );
    // No logLevel: the request asks for none (and the server then sends no logs).
    const muted = await h.bus.execute('mcp.executeTool', { serverId: 'mute', toolName: 'steps', args: {} });
    expect(textOf(muted.data)).toBe('stepped (log level none)');
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'chatty',
      toolName: 'steps',
      args: {},
      progress: { sessionId: 's', callId: 'c-steps' },
    });
    expect(textOf(result.data)).toBe('stepped (log level info)'); // the server saw `io.modelcontextprotocol/logLevel: info`
    expect(progress).toEqual([1, 2, 3]);
    await until(() => logs.some((l) => l.data === 'modern-log-line'), 'the log notification was relayed');
    // The info line came after the debug line and after the call to `mute`: neither of those was relayed.
    expect(logs).toEqual([{ serverId: 'chatty', level: 'info', data: 'modern-log-line' }]);
    offProgress();
    offLogs();
  });

  it('connects to a stdio server that serves 2026-07-28 only', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'modern-stdio', config: fixture('modern-stdio-server') });
    const record = (await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'modern-stdio');
    expect(record).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'modern-stdio',
      toolName: 'greet',
      args: { name: 'pipe' },
    });
    expect(textOf(result.data)).toBe('Hello over stdio, pipe');
  });

  it("follows a modern server's tool list changes (its subscriptions/listen stream)", async () => {
    const names = async () =>
      (await h.bus.execute('mcp.modelTools', {})).filter((t) => t.serverId === 'modern').map((t) => t.toolName);
    expect(await names()).not.toContain('late-tool');
    modernOnly.addTool('late-tool');
    await until(async () => (await names()).includes('late-tool'), 'the new tool is in the catalogue');
  });

  it('removing a modern server connected at runtime ends its subscriptions/listen stream', async () => {
    const before = modernOnly.listening();
    await h.bus.execute('mcp.connectServer', { name: 'listening', config: http(modernOnly.url) });
    await until(() => modernOnly.listening() > before, 'its subscriptions/listen stream is open');
    modernOnly.addTool('heard-tool'); // the stream carries a notification, and the tools are listed again
    await until(
      async () =>
        (await h.bus.execute('mcp.modelTools', {})).some(
          (t) => t.serverId === 'listening' && t.toolName === 'heard-tool',
        ),
      'the new tool is in the catalogue',
    );
    // The stream never ends by itself: the removal ends it (test/int/pinned-fetch.test.ts: rather than wait for it).
    expect(await h.bus.execute('mcp.removeServer', { serverId: 'listening' })).toMatchObject({
      name: 'listening',
      status: 'disconnected',
    });
    await until(() => modernOnly.listening() === before, 'its stream ended');
  });

  it('reports a modern server that went away as lost, not connected', async () => {
    const doomed = await startModernServer('reject');
    await h.bus.execute('mcp.connectServer', { name: 'doomed', config: http(doomed.url) });
    await doomed.close();
    const error = await rejection(
      h.bus.execute('mcp.executeTool', { serverId: 'doomed', toolName: 'greet', args: { name: 'x' } }),
    );
    expect(error.code).toBe('TOOL_EXECUTION_FAILED');
    await until(
      async () => (await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'doomed')?.status !== 'connected',
      'the server is no longer connected',
    );
  });

  it('times a modern tool call out at the server timeout and cancels it when its signal aborts', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'slow', config: http(modernOnly.url, { timeout: 2_000 }) });
    const t0 = Date.now();
    const error = await rejection(
      h.bus.execute('mcp.executeTool', { serverId: 'slow', toolName: 'wait', args: { ms: 10_000 } }),
    );
    expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED', details: { reason: 'timed out after 2000 ms' } });
    expect(Date.now() - t0).toBeLessThan(8_000);

    const names = (await h.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    const wait = names.find((n) => n.includes('slow') && n.includes('wait')) ?? 'wait';
    const controller = new AbortController();
    const pending = h.bus.execute('mcp.callModelTool', { name: wait, args: { ms: 10_000 }, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ success: false, text: 'Error: cancelled' });
  });
});
