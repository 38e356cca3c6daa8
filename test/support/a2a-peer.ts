/**
 * A remote A2A agent for tests: the A2A SDK's own server side (its framework-free JSON-RPC handler
 * behind node:http on 127.0.0.1), never agentd's. `echo` streams "echo: <message>" as an artifact,
 * `ask` answers input-required, `slow` works until its task is cancelled; `legacy` serves a 0.3 card
 * and 0.3 JSON-RPC.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatSSEEvent, Role, SSE_HEADERS, TaskState, type AgentCard, type Message } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
  type ExecutionEventBus,
} from '@a2a-js/sdk/server';

export interface Peer {
  url: string;
  /** Every HTTP request the peer received (method and path). */
  requests: string[];
  /** The `x-peer-key` header of every request. */
  keys: (string | undefined)[];
  /** The messages its executor was given. */
  received: Message[];
  cancelled: Set<string>;
  started: Set<string>;
  close(): Promise<void>;
}

const text = (value: string) => ({
  content: { $case: 'text' as const, value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const agentMessage = (value: string, taskId: string, contextId: string): Message => ({
  messageId: `m-${Math.random()}`,
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [text(value)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const status = (bus: ExecutionEventBus, taskId: string, contextId: string, state: TaskState, message?: string) =>
  bus.publish({
    kind: 'statusUpdate',
    data: {
      taskId,
      contextId,
      status: {
        state,
        message: message === undefined ? undefined : agentMessage(message, taskId, contextId),
        timestamp: new Date().toISOString(),
      },
      metadata: undefined,
    },
  });

export type Behaviour = 'echo' | 'ask' | 'slow';

function executor(peer: Pick<Peer, 'received' | 'cancelled' | 'started'>, behaviour: Behaviour): AgentExecutor {
  const waiting = new Map<string, () => void>();
  return {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      peer.received.push(ctx.userMessage);
      bus.publish({
        kind: 'task',
        data: {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        },
      });
      const said = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      if (behaviour === 'ask') {
        status(bus, taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, 'Which city do you mean?');
      } else if (behaviour === 'slow') {
        status(bus, taskId, contextId, TaskState.TASK_STATE_WORKING);
        peer.started.add(taskId);
        await new Promise<void>((resolve) => waiting.set(taskId, resolve));
        status(bus, taskId, contextId, TaskState.TASK_STATE_CANCELED, 'stopped');
      } else {
        for (const [i, chunk] of ['echo: ', said].entries()) {
          bus.publish({
            kind: 'artifactUpdate',
            data: {
              taskId,
              contextId,
              artifact: {
                artifactId: 'reply',
                name: 'reply',
                description: '',
                parts: [text(chunk)],
                metadata: undefined,
                extensions: [],
              },
              append: i > 0,
              lastChunk: i === 1,
              metadata: undefined,
            },
          });
        }
        status(bus, taskId, contextId, TaskState.TASK_STATE_COMPLETED);
      }
      bus.finished();
    },
    cancelTask(taskId) {
      peer.cancelled.add(taskId);
      waiting.get(taskId)?.();
      return Promise.resolve();
    },
  };
}

/** A peer of `behaviour`; `legacy` serves a 0.3 card and 0.3 JSON-RPC (`message/stream`, `tasks/cancel`, …). */
export async function startPeer(behaviour: Behaviour, streaming = true, legacy = false): Promise<Peer> {
  const peer = {
    requests: [] as string[],
    keys: [] as (string | undefined)[],
    received: [] as Message[],
    cancelled: new Set<string>(),
    started: new Set<string>(),
  };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name: `${behaviour} peer`,
    description: 'an A2A agent of the test',
    version: '1.0.0',
    provider: undefined,
    supportedInterfaces: [{ url: `${url}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    capabilities: { streaming, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    signatures: [],
    skills: [
      {
        id: 'chat',
        name: 'Chat',
        description: `answers (${behaviour})`,
        tags: ['chat'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor(peer, behaviour));
  const rpc = legacy ? new LegacyJsonRpcTransportHandler(handler) : new JsonRpcTransportHandler(handler);
  const cardV03 = {
    protocolVersion: '0.3.0',
    name: card.name,
    description: card.description,
    url: `${url}/a2a`,
    preferredTransport: 'JSONRPC',
    version: '1.0.0',
    capabilities: { streaming },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'chat', name: 'Chat', description: `answers (${behaviour}, 0.3)`, tags: ['chat'] }],
  };
  server.on('request', (req, res) => {
    peer.requests.push(`${req.method} ${req.url}`);
    peer.keys.push(req.headers['x-peer-key'] as string | undefined);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(legacy ? cardV03 : card));
          return;
        }
        if (req.method !== 'POST' || req.url !== '/a2a') {
          res.writeHead(404).end();
          return;
        }
        const version = req.headers['a2a-version'];
        const out = await rpc.handle(
          Buffer.concat(chunks).toString(),
          new ServerCallContext({ requestedVersion: typeof version === 'string' ? version : '0.3' }),
        );
        if (Symbol.asyncIterator in out) {
          res.writeHead(200, SSE_HEADERS);
          for await (const event of out) res.write(formatSSEEvent(event));
          res.end();
        } else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      })().catch((err: unknown) => res.writeHead(500).end(String(err)));
    });
  });
  return {
    url,
    ...peer,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
