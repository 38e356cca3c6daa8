/**
 * Issue 60 item 5: agentd as the host of MCP tasks. Against the fixture task-server.js over stdio (a 2025-11-25 server
 * with the tasks capability; `plain` is the same server without it), the simulator as the model: a task-only tool is
 * offered only where the server runs tasks, its call is a task (created, polled, its result read) whose result reaches
 * the model, its progress reaches the session's watchers, its task id is in the session's log (export), a turn's
 * cancel and the call's timeout cancel the remote task, a failed task is the call's error, and a recorded task is
 * polled again instead of calling the tool a second time. Over HTTP, the task's MCP session id is recorded with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRunEnv } from '../support/process-ledger.ts';
import { fixturePath } from '../support/paths.ts';
import { turnFrames } from '../support/messaging.ts';
import { until } from '../support/wait.ts';
import { shorthandKeys, useShorthandApp } from '../support/keyed-app.ts';

const server = (env: Record<string, string> = {}, extra: Record<string, unknown> = {}) => ({
  type: 'stdio',
  command: process.execPath,
  args: [fixturePath('task-server')],
  env: { TASK_POLL_MS: '40', ...env },
  timeout: 10_000,
  ...extra,
});

interface Stats {
  started: string[];
  cancelled: string[];
  gets: number;
  taskRequests: number;
}

type ShorthandApp = ReturnType<typeof useShorthandApp>;

/** The app's bus, a server's `stats` (through `…/execute`), and a session's stored events (its export, NDJSON). */
function readers(app: ShorthandApp) {
  return {
    bus: () => app.svc.app.bus,
    /** Sends a message whose model step calls `tool`; returns where the chat connection's frames stood. */
    askForJob: (sessionId: string, tool: string, args: Record<string, unknown>) => {
      const from = app.chat.frames.length;
      app.chat.send({ type: 'message', sessionId, content: `run [[tool:${tool} ${JSON.stringify(args)}]]` });
      return from;
    },
    stats: async (serverId: string): Promise<Stats> => {
      const r = await app.asAdmin('POST', `/api/mcp/servers/${serverId}/tools/stats/execute`, {});
      return JSON.parse(r.body.data.content[0].text as string) as Stats;
    },
    logOf: async (sessionId: string) => {
      const res = await fetch(`${app.svc.url}/api/sessions/${sessionId}/export`, {
        headers: { Authorization: `Bearer ${shorthandKeys.apiKey}` },
      });
      return (await res.text())
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { event: Record<string, unknown> }).event);
    },
  };
}

const SHORT_MS = 5_000;
const limits = { rest: { points: 10_000 }, ws: { points: 10_000 } };

describe('MCP tasks as a host: task tools of a remote server', () => {
  const app = useShorthandApp(
    () => ({
      server: { auth: shorthandKeys, limits },
      mcpServers: {
        tasks: server(),
        plain: server({ TASKS: 'off' }),
        // 5 s: long enough for the fixture to start on a loaded machine (the bound covers start-up and initialize).
        short: server({}, { timeout: SHORT_MS }),
      },
    }),
    { connectTimeout: 60_000 },
  );
  const { bus, stats, logOf, askForJob } = readers(app);

  it('offers a task-only tool only of a server that runs tasks; optional task tools of both', async () => {
    const names = (await bus().execute('mcp.modelTools', {})).map((t) => `${t.serverId}/${t.toolName}`);
    expect(names).toContain('tasks/slow-job');
    expect(names).toContain('short/slow-job');
    expect(names).not.toContain('plain/slow-job');
    expect(names).toContain('plain/quick-job');
  });

  it("runs the model's call as a task: the result reaches the model, progress the session, the task id the log", async () => {
    const ws = app.chat;
    const from = askForJob('task-ok', 'tasks--slow-job', { label: 'alpha', ms: 300, steps: 3 });
    const frames = await turnFrames(ws, 'task-ok', from);
    const call = frames.find((f) => f.event === 'toolCall')!;
    const result = frames.find((f) => f.event === 'toolResult')!;
    expect(result.data).toMatchObject({ success: true, toolName: 'slow-job', serverId: 'tasks' });
    expect(JSON.stringify(result.data.result)).toContain('done alpha');
    const progress = ws.frames.slice(from).filter((f) => f.event === 'toolProgress' && f.data.sessionId === 'task-ok');
    expect(progress.map((f) => [f.data.callId, f.data.progress, f.data.total])).toEqual(
      [1, 2, 3].map((n) => [call.data.callId, n, 3]),
    );
    // The model got the task's result as the call's.
    const toolMessage = app.sim.requests
      .flatMap((r) => r.body.messages)
      .find((m) => m.role === 'tool' && JSON.stringify(m.content).includes('done alpha'));
    expect(toolMessage).toBeDefined();
    const task = (await logOf('task-ok')).find((e) => e.type === 'toolTask');
    expect(task).toMatchObject({ turnId: call.data.turnId, callId: call.data.callId, taskId: expect.any(String) });
    expect(task).not.toHaveProperty('mcpSessionId'); // stdio has no MCP session
    const seen = await stats('tasks');
    expect(seen.started).toEqual(['alpha']);
    expect(seen.taskRequests).toBe(1);
    expect(seen.gets).toBeGreaterThan(0);
  });

  it("a turn's cancel cancels the remote task (tasks/cancel), and the turn ends cancelled", async () => {
    const from = askForJob('task-cancel', 'tasks--slow-job', { label: 'long', ms: 30_000, steps: 300 });
    let taskId = '';
    await until(async () => {
      taskId = ((await logOf('task-cancel')).find((e) => e.type === 'toolTask')?.taskId as string) ?? '';
      return taskId !== '';
    }, 'the task recorded');
    expect((await app.asChat('POST', '/api/sessions/task-cancel/cancel')).body.cancelled).toBe(true);
    const frames = await turnFrames(app.chat, 'task-cancel', from);
    expect(frames.at(-1)).toMatchObject({ event: 'error' });
    await until(async () => (await stats('tasks')).cancelled.includes(taskId), 'the fixture saw tasks/cancel');
  });

  it("the call's timeout cancels the task; a failed task is the call's error", async () => {
    const late = await app.asAdmin('POST', '/api/mcp/servers/short/tools/slow-job/execute', {
      label: 'late',
      ms: 30_000,
      steps: 300,
    });
    expect(late.status).toBe(500);
    expect(late.body.error.details.reason).toBe(`timed out after ${SHORT_MS} ms (the task was cancelled)`);
    await until(async () => (await stats('short')).cancelled.length === 1, 'the fixture saw tasks/cancel');

    const failed = await app.asAdmin('POST', '/api/mcp/servers/tasks/tools/slow-job/execute', {
      label: 'broken',
      ms: 30,
      fail: true,
    });
    expect(failed.status).toBe(500);
    expect(failed.body.error.details.reason).toBe('failed broken');
  });

  it('a recorded task is polled again for its result, and the tool is not called a second time', async () => {
    const created: unknown[] = [];
    const first = await bus().execute('mcp.callModelTool', {
      name: 'tasks--slow-job',
      args: { label: 'once', ms: 60, steps: 1 },
      task: { created: (t) => void created.push(t) },
    });
    expect(first.text).toBe('done once');
    expect(created).toEqual([{ taskId: expect.any(String) }]);
    const again = await bus().execute('mcp.callModelTool', {
      name: 'tasks--slow-job',
      args: { label: 'once', ms: 60, steps: 1 },
      task: { resume: created[0] as { taskId: string } },
    });
    expect(again).toMatchObject({ success: true, text: 'done once' });
    expect((await stats('tasks')).started.filter((l) => l === 'once')).toEqual(['once']);
    // A task the server does not know (it was lost with the server's process) is an error, never a second call.
    const lost = await bus().execute('mcp.callModelTool', {
      name: 'tasks--slow-job',
      args: { label: 'lost' },
      task: { resume: { taskId: 'no-such-task' } },
    });
    expect(lost.success).toBe(false);
    expect(lost.text).toContain('no longer knows task no-such-task');
    expect((await stats('tasks')).started).not.toContain('lost');
  });
});

describe('MCP tasks as a host over HTTP', () => {
  let child: ChildProcess | undefined;
  let port = 0;
  beforeAll(async () => {
    const portFile = join(mkdtempSync(join(tmpdir(), 'agentd-tasks-')), 'port');
    child = spawn(process.execPath, [fixturePath('task-server'), '--http', portFile], {
      env: { PATH: process.env.PATH ?? '', ...testRunEnv(), TASK_POLL_MS: '40' },
      stdio: 'ignore',
    });
    await until(() => {
      try {
        port = Number(readFileSync(portFile, 'utf8'));
      } catch {
        return false;
      }
      return port > 0;
    }, 'the HTTP fixture listening');
  });
  afterAll(() => void child?.kill('SIGKILL'));
  const app = useShorthandApp(
    () => ({
      server: { auth: shorthandKeys, limits },
      mcpServers: { remote: { type: 'http', baseUrl: `http://127.0.0.1:${port}/mcp`, timeout: 10_000 } },
    }),
    { connectTimeout: 60_000 },
  );
  const { bus, stats, logOf, askForJob } = readers(app);

  it("records the task with the connection's MCP session id, and polls it again in that session", async () => {
    const from = askForJob('web', 'slow-job', { label: 'web', ms: 80, steps: 2 });
    const frames = await turnFrames(app.chat, 'web', from);
    expect(JSON.stringify(frames.find((f) => f.event === 'toolResult')?.data.result)).toContain('done web');
    const recorded = (await logOf('web')).find((e) => e.type === 'toolTask')!;
    expect(recorded).toMatchObject({ taskId: expect.any(String), mcpSessionId: expect.any(String) });
    const again = await bus().execute('mcp.callModelTool', {
      name: 'slow-job',
      args: { label: 'web' },
      task: { resume: { taskId: recorded.taskId as string, mcpSessionId: recorded.mcpSessionId as string } },
    });
    expect(again).toMatchObject({ success: true, text: 'done web' });
    expect((await stats('remote')).started).toEqual(['web']);
  });
});
