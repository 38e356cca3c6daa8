/**
 * Supervision of MCP servers with real child processes: crashes, kill -9 mid-call, timeouts and cancellation,
 * runtime connect/remove/restart, the retry budget, and shutdown.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { execFileSync } from 'node:child_process';
import { PATIENT } from '../support/wait.ts';
import { fixture, harness, isAlive, rejection, textOf, type Harness } from './mcp-helpers.ts';

/**
 * The hang server's `timeout`, which bounds its calls and also its `initialize`: long enough for node
 * to start it on a loaded machine (half a second or more), short enough to wait out in a test.
 */
const HANG_TIMEOUT = 2_000;
/** Slack on top of a deadline that the service keeps, for a loaded machine's late timers. */
const SLACK = 3_000;

/** Command lines of this process's children that contain `needle`. */
const childrenRunning = (needle: string) =>
  execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(needle));

const pidOf = async (h: Harness, serverId: string) =>
  Number(textOf((await h.bus.execute('mcp.executeTool', { serverId, toolName: 'pid', args: {} })).data));

describe('mcp supervision', () => {
  let h: Harness;

  beforeAll(async () => {
    h = harness({
      crash: fixture('crash-server'),
      hang: fixture('hang-server', { timeout: HANG_TIMEOUT }),
    });
    await h.service.start();
    // `timeout` also bounds `initialize`: on a badly loaded machine the hang server may still miss it.
    // What this file tests starts from connected servers, so restart until they are.
    for (const serverId of ['crash', 'hang']) {
      await vi.waitFor(
        async () => {
          if ((await h.bus.execute('mcp.listServers', {})).find((s) => s.id === serverId)?.status === 'connected')
            return;
          await h.bus.execute('mcp.restartServer', { serverId }).catch(() => undefined);
          throw new Error(`${serverId} did not connect`);
        },
        { timeout: 60_000, interval: 100 },
      );
    }
  });

  afterAll(() => h.stop());

  it('fails a call within 1 s when the stdio server is killed -9 mid-call, then reconnects', async () => {
    const pid = await pidOf(h, 'crash');
    const call = rejection(
      h.bus.execute('mcp.executeTool', { serverId: 'crash', toolName: 'slow', args: { ms: 30_000 } }),
    );
    await new Promise((r) => setImmediate(r)); // the request is on its way
    const lost = h.waitForStatus('crash', 'error');
    const connected = h.waitForStatus('crash', 'connected'); // after a backoff of about a second
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const error = await call;
    const detectedMs = Date.now() - killedAt;
    expect(detectedMs).toBeLessThan(1_000);
    expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED', details: { toolName: 'slow', serverId: 'crash' } });
    expect(String(error.details.reason)).toMatch(/connection to the server closed \(process killed by SIGKILL/);
    expect((await lost).error).toMatch(/SIGKILL/);
    await connected;
    const reconnectedMs = Date.now() - killedAt;
    const newPid = await pidOf(h, 'crash');
    expect(newPid).not.toBe(pid);
    console.log(`kill -9 detected in ${detectedMs} ms; reconnected after ${reconnectedMs} ms`);
  });

  it('reports a tool that crashes its server with the exit code and last stderr line', async () => {
    const connected = h.waitForStatus('crash', 'connected');
    const error = await rejection(h.bus.execute('mcp.executeTool', { serverId: 'crash', toolName: 'crash', args: {} }));
    expect(error.code).toBe('TOOL_EXECUTION_FAILED');
    expect(error.details.reason).toBe(
      'connection to the server closed (process exited with code 70: fixture: crashing on purpose)',
    );
    await connected;
  });

  it("tells a model's call of that tool how the process ended, never what its stderr said (stderr is for admins)", async () => {
    const connected = h.waitForStatus('crash', 'connected');
    const outcome = await h.bus.execute('mcp.callModelTool', { name: 'crash', args: {} });
    expect(outcome).toMatchObject({
      success: false,
      text: 'Error: connection to the server closed (process exited with code 70)',
    });
    await connected;
  });

  it('fails a hung tool at its timeout and cancels it at the server', async () => {
    const t0 = Date.now();
    const error = await rejection(h.bus.execute('mcp.executeTool', { serverId: 'hang', toolName: 'hang', args: {} }));
    const elapsed = Date.now() - t0;
    expect(error).toMatchObject({
      code: 'TOOL_EXECUTION_FAILED',
      details: { toolName: 'hang', serverId: 'hang', reason: `timed out after ${HANG_TIMEOUT} ms` },
    });
    expect(elapsed).toBeGreaterThanOrEqual(HANG_TIMEOUT - 20);
    expect(elapsed).toBeLessThan(HANG_TIMEOUT + SLACK);
    // notifications/cancelled reached the server
    await expect
      .poll(
        async () =>
          textOf(
            (await h.bus.execute('mcp.executeTool', { serverId: 'hang', toolName: 'cancelled-count', args: {} })).data,
          ),
        PATIENT,
      )
      .toBe('1');
  });

  it('cancels a model tool call when its signal aborts', async () => {
    const controller = new AbortController();
    const t0 = Date.now();
    const pending = h.bus.execute('mcp.callModelTool', { name: 'hang', args: {}, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const out = await pending;
    expect(Date.now() - t0).toBeLessThan(HANG_TIMEOUT); // ended by the abort, not at the timeout
    expect(out).toMatchObject({ success: false, text: 'Error: cancelled', serverId: 'hang', toolName: 'hang' });
    await expect
      .poll(async () => (await h.bus.execute('mcp.callModelTool', { name: 'cancelled-count', args: {} })).text, PATIENT)
      .toBe('2');
  });

  it("refuses a runtime server named as agentd's own tools (a client's tools, the memory tools), starting nothing", async () => {
    for (const name of ['client', 'agentd:memory']) {
      expect(
        await rejection(h.bus.execute('mcp.connectServer', { name, config: fixture('echo-server') })),
      ).toMatchObject({
        code: 'INVALID_REQUEST',
        details: { field: 'name', name },
      });
    }
    expect((await h.bus.execute('mcp.listServers', {})).map((s) => s.name)).not.toContain('client');
  });

  it('connects a server at runtime; a duplicate name is INVALID_REQUEST; a failure is AGENT_ERROR and listed', async () => {
    const record = await h.bus.execute('mcp.connectServer', { name: 'late', config: fixture('echo-server') });
    expect(record).toEqual({
      id: 'late',
      name: 'late',
      status: 'connected',
      type: 'stdio',
      capabilities: expect.objectContaining({ progress: true }),
    });
    expect((await h.bus.execute('mcp.modelTools', {})).map((t) => t.name)).toContain('echo');

    expect(
      await rejection(h.bus.execute('mcp.connectServer', { name: 'late', config: fixture('echo-server') })),
    ).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'name' },
    });

    const failed = await rejection(h.bus.execute('mcp.connectServer', { name: 'bad', config: fixture('exit-server') }));
    expect(failed).toMatchObject({
      code: 'AGENT_ERROR',
      details: { serverId: 'bad', reason: 'process exited with code 3: fixture: refusing to start' },
    });
    const listed = (await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'bad');
    expect(listed).toMatchObject({ status: 'error', error: 'process exited with code 3: fixture: refusing to start' });
  });

  it('gives up on a server that never answers initialize at its timeout', async () => {
    const silent = fixture('silent-server', { timeout: 300 });
    const t0 = Date.now();
    const error = await rejection(h.bus.execute('mcp.connectServer', { name: 'silent', config: silent }));
    expect(Date.now() - t0).toBeLessThan(300 + SLACK);
    expect(error).toMatchObject({
      code: 'AGENT_ERROR',
      details: { serverId: 'silent', reason: 'timed out after 300 ms' },
    });
    await h.bus.execute('mcp.removeServer', { serverId: 'silent' });
  });

  it('removes a server: disconnected is reported, it leaves the list, its child exits, its tools go', async () => {
    const pidLate = await h.bus
      .execute('mcp.connectServer', { name: 'gone', config: fixture('crash-server') })
      .then(() => pidOf(h, 'gone'));
    const changes = h.toolsChanged.length;
    const removed = await h.bus.execute('mcp.removeServer', { serverId: 'gone' });
    expect(removed).toEqual({ id: 'gone', name: 'gone', status: 'disconnected', type: 'stdio' });
    expect(h.statuses.filter((s) => s.name === 'gone').at(-1)).toMatchObject({ status: 'disconnected' }); // 'bad' retries meanwhile
    expect((await h.bus.execute('mcp.listServers', {})).map((s) => s.name)).not.toContain('gone');
    expect(isAlive(pidLate)).toBe(false);
    expect(h.toolsChanged.length).toBeGreaterThan(changes);
    expect(await rejection(h.bus.execute('mcp.removeServer', { serverId: 'gone' }))).toMatchObject({
      code: 'SERVER_NOT_FOUND',
    });
    await h.bus.execute('mcp.removeServer', { serverId: 'bad' }); // a server in backoff can be removed too
  });

  it('restarts a server with a new process', async () => {
    const before = await pidOf(h, 'crash');
    const record = await h.bus.execute('mcp.restartServer', { serverId: 'crash' });
    expect(record.status).toBe('connected');
    const after = await pidOf(h, 'crash');
    expect(after).not.toBe(before);
    await expect.poll(() => isAlive(before), PATIENT).toBe(false);
  });
});

describe('mcp retry budget and shutdown', () => {
  it('stops retrying after repeated failures until restarted', async () => {
    const h = harness(
      { flaky: fixture('exit-server') },
      { retry: { baseDelayMs: 20, maxDelayMs: 50, maxFailures: 3, windowMs: 60_000 } },
    );
    try {
      await h.service.start();
      const halted = await new Promise<string>((resolve) => {
        const off = h.bus.on('mcp.serverStatus', (e) => {
          if (e.payload.error?.includes('stopped retrying')) {
            off();
            resolve(e.payload.error);
          }
        });
      });
      expect(halted).toMatch(
        /^process exited with code 3: .* \(stopped retrying after 3 failures within 60 s; restart/,
      );
      // That no retry follows a halt is shown on a simulated clock (test/unit/mcp-server-machine.test.ts).
      expect(h.statuses.filter((s) => s.status === 'connecting').length).toBe(3);

      expect(await rejection(h.bus.execute('mcp.restartServer', { serverId: 'flaky' }))).toMatchObject({
        code: 'AGENT_ERROR',
        details: { serverId: 'flaky' },
      });
      expect(h.statuses.filter((s) => s.status === 'connecting').length).toBe(4);
    } finally {
      await h.stop();
    }
  });

  it('stop() ends every child, even one that ignores stdin closing, and unregisters the handlers', async () => {
    const h = harness({ hang: fixture('hang-server'), crash: fixture('crash-server'), never: fixture('exit-server') });
    await h.service.start();
    const pids = [await pidOf(h, 'crash')];
    expect(childrenRunning('hang-server')).toHaveLength(1);
    const t0 = Date.now();
    await h.stop();
    expect(Date.now() - t0).toBeLessThan(3_000);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(childrenRunning('fixtures/mcp')).toEqual([]);
    const disconnected = h.statuses
      .filter((s) => s.status === 'disconnected')
      .map((s) => s.name)
      .sort();
    expect(disconnected).toEqual(['crash', 'hang', 'never']);
    expect(await rejection(h.bus.execute('mcp.listServers', {}))).toMatchObject({ code: 'INTERNAL_ERROR' });
  });
});
