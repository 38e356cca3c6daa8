/**
 * The MCP service through the bus with real servers over stdio: server-everything, server-filesystem and the
 * project's fixtures. Supervision (crashes, kill -9, restart) is in mcp-supervision.test.ts, HTTP in
 * mcp-http.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MODEL_TOOL_NAME } from '../../src/tools/index.ts';
import { PATIENT } from '../support/wait.ts';
import { EVERYTHING, FILESYSTEM, fixture, harness, rejection, stdio, textOf, type Harness } from './mcp-helpers.ts';

const SECRET = 'agentd-test-secret-value-7f3a';

describe('mcp service (stdio)', () => {
  let h: Harness;
  let dir: string;

  beforeAll(async () => {
    process.env.AGENTD_TEST_SECRET = SECRET;
    dir = await mkdtemp(join(tmpdir(), 'agentd-mcp-'));
    await writeFile(join(dir, 'hello.txt'), 'hello from the filesystem');
    h = harness({
      everything: stdio([EVERYTHING], { env: { VISIBLE_SETTING: 'yes' }, description: 'reference server' }),
      fs: stdio([FILESYSTEM, dir]),
      broken: fixture('exit-server'),
      missing: stdio([], { command: '/nonexistent/agentd-no-such-binary' }),
      noScript: stdio(['/nonexistent/agentd-server.js']),
      // --offline: npm answers from its cache at once (no registry round trip, the same on every machine).
      noPackage: stdio([], { command: 'npx', args: ['-y', '--offline', 'agentd-no-such-package-zz9'] }),
      fixture: fixture('echo-server'),
    });
    await h.service.start();
  });

  afterAll(async () => {
    await h.stop();
    delete process.env.AGENTD_TEST_SECRET;
    await rm(dir, { recursive: true, force: true });
  });

  it('starts every configured server in parallel; failing ones are listed as error with a reason', async () => {
    // In parallel: every server was connecting before the first one was connected.
    const firstConnected = h.statuses.findIndex((s) => s.status === 'connected');
    expect(
      new Set(
        h.statuses
          .slice(0, firstConnected)
          .filter((s) => s.status === 'connecting')
          .map((s) => s.name),
      ).size,
    ).toBe(7);
    // Failing servers are retried after a backoff (about a second, then longer), `connecting` while
    // they are; listed between attempts, they show their error.
    const servers = await vi.waitFor(async () => {
      const list = await h.bus.execute('mcp.listServers', {});
      const connecting = list.filter((s) => s.status === 'connecting').map((s) => s.name);
      if (connecting.length > 0) throw new Error(`still connecting: ${connecting.join(', ')}`);
      return list;
    }, PATIENT);
    const byName = Object.fromEntries(servers.map((s) => [s.name, s]));
    expect(byName.everything).toEqual({
      id: 'everything',
      name: 'everything',
      status: 'connected',
      type: 'stdio',
      description: 'reference server',
      capabilities: expect.objectContaining({
        client: expect.objectContaining({ elicitation: expect.anything() }),
        progress: true,
      }),
    });
    expect(byName.fs?.status).toBe('connected');
    expect(byName.fixture?.status).toBe('connected');
    expect(byName.broken).toMatchObject({
      status: 'error',
      error: 'process exited with code 3: fixture: refusing to start',
    });
    expect(byName.missing?.status).toBe('error');
    expect(byName.missing?.error).toMatch(/ENOENT/);
    // The cause Node and npm print, not their closing banners (`Node.js v…`, `A complete log of this run…`).
    expect(byName.noScript?.error).toBe(
      "process exited with code 1: Error: Cannot find module '/nonexistent/agentd-server.js'",
    );
    expect(byName.noPackage?.error).toMatch(
      /^process exited with code 1: npm error request to \S+agentd-no-such-package-zz9 failed: cache mode is 'only-if-cached'/,
    );
    expect(byName.noPackage?.error).not.toMatch(/complete log/);
    expect(h.statuses.find((s) => s.name === 'noScript' && s.status === 'error')?.error).toBe(byName.noScript?.error);
    expect(servers.map((s) => s.name)).toEqual([
      'everything',
      'fs',
      'broken',
      'missing',
      'noScript',
      'noPackage',
      'fixture',
    ]);
    // status events went out on the bus
    expect(
      h.statuses
        .filter((s) => s.name === 'everything')
        .map((s) => s.status)
        .slice(0, 2),
    ).toEqual(['connecting', 'connected']);
  });

  it('lists the tools of a server by id', async () => {
    const tools = await h.bus.execute('mcp.listTools', { serverId: 'everything' });
    const echo = tools.find((t) => t.name === 'echo');
    expect(echo).toMatchObject({ id: 'echo', name: 'echo', description: 'Echoes back the input string' });
    expect(echo?.inputSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });
    expect(await h.bus.execute('mcp.listTools', { serverId: 'broken' })).toEqual([]);
    expect(await rejection(h.bus.execute('mcp.listTools', { serverId: 'nope' }))).toMatchObject({
      code: 'SERVER_NOT_FOUND',
      details: { serverId: 'nope' },
    });
  });

  it('executes a tool: data is the MCP result, duration in ms', async () => {
    const before = Date.now();
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'everything',
      toolName: 'get-sum',
      args: { a: 2, b: 3 },
    });
    expect(result.success).toBe(true);
    expect(result.data).toEqual({ content: [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }] });
    expect(result.execution).toMatchObject({ toolName: 'get-sum', serverId: 'everything' });
    expect(result.execution.duration).toBeGreaterThanOrEqual(0);
    expect(result.execution.duration).toBeLessThan(Date.now() - before + 1);
    expect(result.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const structured = await h.bus.execute('mcp.executeTool', {
      serverId: 'everything',
      toolName: 'get-structured-content',
      args: { location: 'Chicago' },
    });
    expect(structured.data.structuredContent).toMatchObject({ temperature: expect.any(Number) as number });
  });

  it('reads a file through server-filesystem', async () => {
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'fs',
      toolName: 'read_text_file',
      args: { path: join(dir, 'hello.txt') },
    });
    expect(textOf(result.data)).toBe('hello from the filesystem');
    const outside = await rejection(
      h.bus.execute('mcp.executeTool', { serverId: 'fs', toolName: 'read_text_file', args: { path: '/etc/hostname' } }),
    );
    expect(outside).toMatchObject({
      code: 'TOOL_EXECUTION_FAILED',
      details: { toolName: 'read_text_file', serverId: 'fs' },
    });
    expect(String(outside.details.reason)).toMatch(/denied|outside/i);
  });

  it('reports each execution error with its code and details', async () => {
    const exec = (serverId: string, toolName: string, args: unknown) =>
      rejection(h.bus.execute('mcp.executeTool', { serverId, toolName, args }));

    expect(await exec('nope', 'echo', {})).toMatchObject({ code: 'SERVER_NOT_FOUND', details: { serverId: 'nope' } });
    expect(await exec('everything', 'nope', {})).toMatchObject({
      code: 'TOOL_NOT_FOUND',
      details: { toolName: 'nope', serverId: 'everything' },
    });
    const invalid = await exec('everything', 'get-sum', { a: 'two' });
    expect(invalid.code).toBe('INVALID_REQUEST');
    expect(invalid.details.issues).toEqual([
      { path: '/', message: "must have required property 'b'" },
      { path: '/a', message: 'must be number' },
    ]);
    expect((await exec('everything', 'get-sum', [1, 2])).details.issues).toEqual([
      { path: '/', message: 'must be object' },
    ]);
    expect(await exec('fixture', 'fail', {})).toMatchObject({
      code: 'TOOL_EXECUTION_FAILED',
      details: { toolName: 'fail', serverId: 'fixture', reason: 'this tool always fails' },
    });
    // `broken` is retried after a backoff (`status connecting` while it is); between attempts a call names its error.
    const down = await vi.waitFor(async () => {
      const error = await exec('broken', 'anything', {});
      expect(String(error.details.reason)).toMatch(/not connected \(status error: process exited with code 3/);
      return error;
    }, PATIENT);
    expect(down).toMatchObject({
      code: 'TOOL_EXECUTION_FAILED',
      details: { toolName: 'anything', serverId: 'broken' },
    });
  });

  it('treats a missing body as empty arguments', async () => {
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'everything',
      toolName: 'get-tiny-image',
      args: undefined,
    });
    expect((result.data.content as { type: string }[]).map((c) => c.type)).toContain('image');
  });

  it('gives a stdio child only its configured env plus PATH and HOME', async () => {
    const result = await h.bus.execute('mcp.executeTool', { serverId: 'everything', toolName: 'get-env', args: {} });
    const env = JSON.parse(textOf(result.data)) as Record<string, string>;
    expect(JSON.stringify(env)).not.toContain(SECRET);
    expect(Object.keys(env).sort()).toEqual(
      ['HOME', 'PATH', 'VISIBLE_SETTING'].filter((k) => k !== 'HOME' || process.env.HOME),
    );
    expect(env.VISIBLE_SETTING).toBe('yes');
  });

  it('offers the model unique, valid names: server--tool where two servers share a tool name', async () => {
    const tools = await h.bus.execute('mcp.modelTools', {});
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(MODEL_TOOL_NAME);
    expect(names).not.toContain('echo');
    expect(names).toEqual(
      expect.arrayContaining(['everything--echo', 'fixture--echo', 'get-sum', 'read_text_file', 'fail']),
    );
    // server-everything runs tools as tasks: its task-only tool is offered, and called as a task (issue 60).
    expect(names).toContain('simulate-research-query');
    const get = tools.find((t) => t.name === 'get-sum');
    expect(get).toMatchObject({ serverId: 'everything', toolName: 'get-sum', parameters: { type: 'object' } });
    expect(get?.parameters).not.toHaveProperty('$schema');

    const a = await h.bus.execute('mcp.callModelTool', { name: 'everything--echo', args: { message: 'hi' } });
    const b = await h.bus.execute('mcp.callModelTool', { name: 'fixture--echo', args: '{"message":"hi"}' });
    expect(a).toMatchObject({ success: true, text: 'Echo: hi', serverId: 'everything', toolName: 'echo' });
    expect(b).toMatchObject({ success: true, text: 'fixture echo: hi', serverId: 'fixture', toolName: 'echo' });
    expect(a.result).toEqual({ content: [{ type: 'text', text: 'Echo: hi' }] });
  });

  it("runs server-everything's task-only tool as a task (its four stages, about 4 s) and gets its report", async () => {
    const research = await h.bus.execute('mcp.callModelTool', {
      name: 'simulate-research-query',
      args: { topic: 'tides' },
    });
    expect(research).toMatchObject({ success: true, serverId: 'everything', toolName: 'simulate-research-query' });
    expect(research.text).toContain('tides');
  });

  it('callModelTool reports failures as results, never throws', async () => {
    const unknown = await h.bus.execute('mcp.callModelTool', { name: 'nope', args: {} });
    expect(unknown).toMatchObject({ success: false, text: 'Error: unknown tool "nope"' });
    const invalid = await h.bus.execute('mcp.callModelTool', { name: 'get-sum', args: { a: 1 } });
    expect(invalid.success).toBe(false);
    expect(invalid.text).toContain("must have required property 'b'");
    const failing = await h.bus.execute('mcp.callModelTool', { name: 'fail', args: {} });
    expect(failing).toMatchObject({ success: false, text: 'this tool always fails', serverId: 'fixture' });
    const badJson = await h.bus.execute('mcp.callModelTool', { name: 'get-sum', args: '{not json' });
    expect(badJson).toMatchObject({ success: false, text: expect.stringContaining('not valid JSON') as string });
  });

  it('caps long results for the model with a visible marker', async () => {
    const small = harness({ fixture: fixture('echo-server') }, { toolResultMaxBytes: 1000 });
    try {
      await small.service.start();
      const out = await small.bus.execute('mcp.callModelTool', { name: 'big', args: { bytes: 5001 } });
      expect(out.success).toBe(true);
      expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(1000);
      expect(out.text).toMatch(/\n\[\.\.\. truncated \d+ bytes by agentd\]$/);
      const removed = Number(/truncated (\d+) bytes/.exec(out.text)?.[1]);
      expect(Buffer.byteLength(out.text.replace(/\n\[\.\.\..*$/, '')) + removed).toBe(5001);
      // the REST result is not cut
      const full = await small.bus.execute('mcp.executeTool', {
        serverId: 'fixture',
        toolName: 'big',
        args: { bytes: 5001 },
      });
      expect(Buffer.byteLength(textOf(full.data))).toBe(5001);
    } finally {
      await small.stop();
    }
  });

  it('fails a stdio result over maxResultBytes with the limit named, and the connection goes on', async () => {
    const capped = harness({ fixture: fixture('echo-server', { maxResultBytes: 100_000 }) });
    try {
      await capped.service.start();
      const error = await rejection(
        capped.bus.execute('mcp.executeTool', { serverId: 'fixture', toolName: 'big', args: { bytes: 300_000 } }),
      );
      expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED', details: { serverId: 'fixture', toolName: 'big' } });
      expect(String(error.details.reason)).toMatch(/over the server's maxResultBytes \(100000\)/);
      const model = await capped.bus.execute('mcp.callModelTool', { name: 'big', args: { bytes: 300_000 } });
      expect(model).toMatchObject({ success: false, text: expect.stringMatching(/maxResultBytes/) as string });
      const after = await capped.bus.execute('mcp.executeTool', {
        serverId: 'fixture',
        toolName: 'echo',
        args: { message: 'still here' },
      });
      expect(textOf(after.data)).toBe('fixture echo: still here');
      expect((await capped.bus.execute('mcp.listServers', {}))[0]?.status).toBe('connected');
    } finally {
      await capped.stop();
    }
  });

  it('refreshes the catalogue on notifications/tools/list_changed', async () => {
    const before = h.toolsChanged.length;
    await h.bus.execute('mcp.executeTool', { serverId: 'fixture', toolName: 'add-tool', args: { name: 'late_tool' } });
    await expect.poll(() => h.toolsChanged.length, PATIENT).toBeGreaterThan(before);
    const names = (await h.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    expect(names).toContain('late_tool');
    expect((await h.bus.execute('mcp.listTools', { serverId: 'fixture' })).map((t) => t.name)).toContain('late_tool');
    const out = await h.bus.execute('mcp.callModelTool', { name: 'late_tool', args: {} });
    expect(out).toMatchObject({ success: true, text: 'I am late_tool' });
  });
});
