/**
 * The A2A face against the letter of the spec (issue 37, item 2): the JSON-RPC envelope (unknown
 * methods, JSON bodies, unknown paths), hop counts, ListTasks' validation and filters, follow-up
 * messages to a running task, and file parts. `@a2a-js/sdk`'s clients where the SDK can say the
 * request (v1.0 and v0.3), raw HTTP where it cannot.
 */
import { join } from 'node:path';
import { describe, beforeAll, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Client as A2aClient } from '@a2a-js/sdk/client';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { roomyLimits, useSimulatorAndFolder, lastMessagesWith } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import * as a2a from '../support/a2a-clients.ts';
import { listRequest, rawFile, rawRpc, replyOf, send, text, urlFile, userMessage } from '../support/a2a-clients.ts';

const KEY = 'letter-key-0123456789abcdef';
const env = useSimulatorAndFolder('agentd-a2a-letter-');
let app: RunningApp;
beforeAll(async () => {
  app = await env.apps.start(
    {
      storage: { type: 'jsonl', dir: join(env.dir, 'log') },
      server: { ...roomyLimits, auth: { keys: [{ name: 'letter', key: KEY, scopes: ['chat'] }] } },
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
});

const clients = {
  '1.0': (): Promise<A2aClient> => a2a.v1Client(app, KEY),
  '0.3': (): Promise<A2aClient> => a2a.v03Client(app, KEY),
};
const VERSIONS = ['1.0', '0.3'] as const;
const versionHeader = (v: (typeof VERSIONS)[number]): Record<string, string> =>
  v === '1.0' ? { 'A2A-Version': '1.0' } : {};

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('the JSON-RPC envelope', () => {
  for (const v of VERSIONS)
    it(`answers -32601 for a method it does not serve, Object.prototype's names included (v${v})`, async () => {
      for (const method of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf', 'NoSuchMethod']) {
        const { status, body } = await rawRpc(app, KEY, { jsonrpc: '2.0', id: method, method }, versionHeader(v));
        expect(status).toBe(200);
        expect(body, method).toMatchObject({ id: method, error: { code: -32601 } });
        expect(body.error.message).toContain(method);
      }
    });

  it('takes JSON bodies only: a text/plain body is refused (415, a JSON-RPC error) even without an Origin', async () => {
    const request = {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'plain', role: 'ROLE_USER', parts: [{ text: '[[reply:never-plain]]' }] } },
    };
    const plain = await rawRpc(app, KEY, request, { 'Content-Type': 'text/plain', 'A2A-Version': '1.0' });
    expect(plain.status).toBe(415);
    expect(plain.body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Content-Type must be application/json' },
    });
    expect(JSON.stringify(env.sim.requests)).not.toContain('never-plain');
    // The same request as JSON (with a charset, or as application/a2a+json) is served.
    for (const type of ['application/json; charset=utf-8', 'application/a2a+json']) {
      const json = await rawRpc(
        app,
        KEY,
        { ...request, params: { message: { ...request.params.message, parts: [{ text: '[[reply:json]]' }] } } },
        { 'Content-Type': type, 'A2A-Version': '1.0' },
      );
      expect(json.body.result.task.status.state, type).toBe('TASK_STATE_COMPLETED');
    }
  });

  it('answers 404 in the error envelope for an unknown path under /a2a/', async () => {
    for (const [method, path] of [
      ['POST', '/a2a/foo'],
      ['GET', '/a2a/tasks/x'],
      ['POST', '/a2a/'],
    ] as const) {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        ...(method === 'POST' && { body: '{}' }),
      });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({
        success: false,
        error: { code: 'INVALID_REQUEST', message: `Unknown route ${path}` },
      });
    }
  });
});

describe('hop counts', () => {
  for (const v of VERSIONS)
    it(`refuses a hop count that is not a non-negative integer with -32602 naming the field (v${v})`, async () => {
      const client = await clients[v]();
      for (const hops of [-5, 1.5, '2']) {
        await expect(
          send(client, [text('[[reply:hops]]')], { metadata: { 'agentd/hops': hops } }),
          String(hops),
        ).rejects.toMatchObject({ envelopeCode: -32602, message: expect.stringContaining('agentd/hops') });
      }
      const zero = await send(client, [text('[[reply:zero hops]]')], { metadata: { 'agentd/hops': 0 } });
      expect(zero.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

  it('/mcp refuses the same hop counts with -32602', async () => {
    const mcp = new McpClient({ name: 'hops', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${KEY}` } },
      }),
    );
    try {
      for (const hops of [-5, 1.5, '2'])
        await expect(
          mcp.callTool({ name: 'chat_with_agent', arguments: { message: 'hi' }, _meta: { 'agentd/hops': hops } }),
          String(hops),
        ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('agentd/hops') });
    } finally {
      await mcp.close();
    }
  });
});

describe('ListTasks', () => {
  const rpcList = (params: Record<string, unknown>) =>
    rawRpc(app, KEY, { jsonrpc: '2.0', id: 1, method: 'ListTasks', params }, { 'A2A-Version': '1.0' });

  it('refuses an unknown status, a negative historyLength, a pageSize out of 1..100, a bad pageToken or timestamp with -32602', async () => {
    const client = await clients['1.0']();
    const refused: [string, Parameters<typeof listRequest>[0]][] = [
      ['historyLength', { historyLength: -1 }],
      ['pageSize', { pageSize: 0 }],
      ['pageSize', { pageSize: 101 }],
      ['pageToken', { pageToken: 'invalid-token-xyz' }],
      ['statusTimestampAfter', { statusTimestampAfter: 'yesterday' }],
    ];
    for (const [field, params] of refused)
      await expect(client.listTasks(listRequest(params)), JSON.stringify(params)).rejects.toMatchObject({
        envelopeCode: -32602,
        message: expect.stringContaining(field),
      });
    expect((await rpcList({ status: 'finished' })).body.error).toMatchObject({ code: -32602 });
    expect((await rpcList({ status: 99 })).body.error).toMatchObject({ code: -32602 });
    // A status left out: the SDK writes it "UNRECOGNIZED", which filters nothing.
    expect((await client.listTasks({ contextId: '' } as any)).tasks).toBeInstanceOf(Array);
    // A state of the spec this agent never reaches filters to nothing; the unspecified state filters nothing.
    expect((await client.listTasks(listRequest({ status: TaskState.TASK_STATE_REJECTED }))).tasks).toEqual([]);
    expect((await rpcList({ status: 'TASK_STATE_UNSPECIFIED' })).body.result.tasks).toBeInstanceOf(Array);
  });

  it('statusTimestampAfter keeps the tasks whose status changed at or after it', async () => {
    const client = await clients['1.0']();
    const first = await send(client, [text('[[reply:early]]')], { contextId: 'list-after' });
    const second = await send(client, [text('[[reply:late]] [[ttft:30]]')], { contextId: 'list-after' });
    expect(Date.parse(second.status.timestamp)).toBeGreaterThan(Date.parse(first.status.timestamp));
    const ids = async (after: string) =>
      (await client.listTasks(listRequest({ contextId: 'list-after', statusTimestampAfter: after }))).tasks.map(
        (t: any) => t.id,
      );
    expect(await ids(first.status.timestamp)).toEqual([second.id, first.id]); // newest first (A2A v1.0 §3.1.4)
    expect(await ids(second.status.timestamp)).toEqual([second.id]);
    expect(await ids(new Date(Date.parse(second.status.timestamp) + 1).toISOString())).toEqual([]);
  });

  it('leaves artifacts out unless includeArtifacts, and history out with historyLength 0', async () => {
    const client = await clients['1.0']();
    const done = await send(client, [text('[[reply:with an artifact]]')], { contextId: 'list-artifacts' });
    const plain = (await rpcList({ contextId: 'list-artifacts' })).body.result.tasks[0];
    expect(plain.id).toBe(done.id);
    expect(plain).not.toHaveProperty('artifacts');
    expect(plain.history).toHaveLength(2);
    const full = await client.listTasks(listRequest({ contextId: 'list-artifacts', includeArtifacts: true }));
    expect(replyOf(full.tasks[0])).toBe('with an artifact');
    const bare = (await rpcList({ contextId: 'list-artifacts', historyLength: 0 })).body.result.tasks[0];
    expect(bare).not.toHaveProperty('history');
  });
});

describe('follow-up messages', () => {
  for (const v of VERSIONS)
    it(`a message on a running task is queued as the next task of its context (v${v})`, async () => {
      const client = await clients[v]();
      const running = (await client.sendMessage({
        message: userMessage([text(`[[ttft:1500]] [[reply:first ${v}]]`)]),
        configuration: { returnImmediately: true, blocking: false },
      } as any)) as any;
      expect(running.status.state).not.toBe(TaskState.TASK_STATE_COMPLETED);
      const next = await send(client, [text(`[[reply:second ${v}]] follow-up ${v}`)], {
        taskId: running.id,
        contextId: running.contextId,
      });
      expect(next.contextId).toBe(running.contextId);
      expect(next.id).not.toBe(running.id);
      expect(next.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(replyOf(next)).toBe(`second ${v}`);
      // It ran after the first task, whose reply the model saw.
      expect(JSON.stringify(lastMessagesWith(env.sim, `follow-up ${v}`))).toContain(`first ${v}`);
      expect((await client.getTask({ id: running.id } as any)).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

  it("refuses a contextId that is not the task's (-32602), and any message on a finished task (-32004)", async () => {
    const client = await clients['1.0']();
    const done = await send(client, [text('[[reply:mine]]')]);
    await expect(send(client, [text('more')], { taskId: done.id, contextId: 'another-context' })).rejects.toMatchObject(
      { envelopeCode: -32602, message: expect.stringContaining('contextId') },
    );
    // A finished task takes no message (the spec's UnsupportedOperation).
    await expect(send(client, [text('more')], { taskId: done.id })).rejects.toMatchObject({ envelopeCode: -32004 });
  });
});

describe('file parts', () => {
  it('the card names the image types among its input modes', async () => {
    const card = await (await clients['1.0']()).getAgentCard();
    expect(card.defaultInputModes).toEqual(expect.arrayContaining(['text/plain', 'image/png', 'image/jpeg']));
  });

  for (const v of VERSIONS)
    it(`an inline image reaches the model as an image part (v${v})`, async () => {
      const client = await clients[v]();
      const task = await send(client, [text(`[[image]] look ${v}`), rawFile(PNG, 'image/png', 'dot.png')]);
      expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(replyOf(task)).toBe(`The last user message had an image (image/png, ${PNG.length} bytes).`);
      const last = lastMessagesWith(env.sim, `look ${v}`).at(-1)!;
      expect(last.content).toContainEqual({
        type: 'image_url',
        image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` },
      });
    });

  it('refuses another media type with ContentTypeNotSupported (-32005) naming it, and a file by URL', async () => {
    const client = await clients['1.0']();
    await expect(
      send(client, [text('read this'), rawFile(Buffer.from('%PDF-1.4'), 'application/pdf', 'a.pdf')]),
    ).rejects.toMatchObject({ envelopeCode: -32005, message: expect.stringContaining('application/pdf') });
    await expect(
      send(client, [text('see this'), urlFile('https://example.com/cat.png', 'image/png')]),
    ).rejects.toMatchObject({ envelopeCode: -32004, message: expect.stringContaining('URL') });
    await expect(
      send(client, [text('two'), rawFile(PNG, 'image/png'), rawFile(PNG, 'image/png')]),
    ).rejects.toMatchObject({ envelopeCode: -32602 });
  });
});
