/** A2A agents as tools, the pure parts: card → tools (v1.0 and 0.3 cards), model names, hop refusal, reply text. */
import { describe, expect, it } from 'vitest';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { a2aMessage, callA2a, partsText } from '../../src/tools/a2a/call.ts';
import { A2A_INPUT_SCHEMA, cardTools, cardUrlOf, normalizeCard } from '../../src/tools/a2a/agent.ts';
import { buildCatalogue } from '../../src/tools/catalogue.ts';
import { parseConfig } from '../../src/config/index.ts';
import { HOPS_META_KEY } from '../../src/conversation/hops.ts';

const V1_CARD = {
  name: 'Weather',
  description: 'Knows the weather',
  version: '1.0.0',
  supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    { id: 'forecast', name: 'Forecast', description: 'The next days', tags: ['weather'] },
    { id: 'alerts', name: 'Alerts', description: 'Storm warnings', tags: ['weather'] },
  ],
};

const V03_CARD = {
  protocolVersion: '0.3.0',
  name: 'Legacy',
  description: 'A 0.3 agent',
  url: 'http://127.0.0.1:1/a2a',
  preferredTransport: 'JSONRPC',
  version: '0.1.0',
  capabilities: { streaming: false },
  defaultInputModes: ['text'],
  defaultOutputModes: ['text'],
  skills: [{ id: 'chat', name: 'Chat', description: 'Talks', tags: [] }],
};

describe('card → tools', () => {
  it('a v1.0 card gives one tool per skill, taking { message }', async () => {
    const tools = cardTools(await normalizeCard(V1_CARD));
    expect(tools.map((t) => [t.name, t.title])).toEqual([
      ['forecast', 'Weather: Forecast'],
      ['alerts', 'Weather: Alerts'],
    ]);
    expect(tools[0]!.description).toBe('Ask the A2A agent "Weather" (skill Forecast). The next days');
    expect(tools.every((t) => t.inputSchema === A2A_INPUT_SCHEMA)).toBe(true);
    expect(A2A_INPUT_SCHEMA).toMatchObject({ required: ['message'], properties: { message: { type: 'string' } } });
  });

  it('a 0.3 card is read through the compatibility layer, with its endpoint and streaming flag', async () => {
    const card = await normalizeCard(V03_CARD);
    expect(cardTools(card).map((t) => t.name)).toEqual(['chat']);
    expect(card.supportedInterfaces[0]).toMatchObject({ url: 'http://127.0.0.1:1/a2a', protocolVersion: '0.3.0' });
    expect(card.capabilities?.streaming).toBe(false);
  });

  it('a card without skills offers one tool, chat, described by the card', () => {
    const tools = cardTools({ name: 'Bare', description: 'Just talks', skills: [] });
    expect(tools.map((t) => [t.name, t.description])).toEqual([
      ['chat', 'Ask the A2A agent "Bare" (skill chat). Just talks'],
    ]);
  });

  it('the card is looked for under the whole URL, its path kept', () => {
    expect(cardUrlOf('http://h:1/agents/x/')).toBe('http://h:1/agents/x/.well-known/agent-card.json');
    expect(cardUrlOf('http://h:1')).toBe('http://h:1/.well-known/agent-card.json');
  });
});

describe('model names of A2A tools', () => {
  const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });

  it('are always <entry>--<skill>, while an MCP tool of the same name keeps its plain name', () => {
    const catalogue = buildCatalogue([
      { serverId: 'files', tools: [tool('chat')] },
      { serverId: 'peer', tools: [tool('chat'), tool('forecast')], qualified: true },
    ]);
    expect([...catalogue.keys()]).toEqual(['chat', 'peer--chat', 'peer--forecast']);
    expect(catalogue.get('peer--chat')).toMatchObject({ serverId: 'peer', tool: { name: 'chat' } });
  });

  it('are made valid like any name (invalid characters, length)', () => {
    const [name, long] = [
      ...buildCatalogue([
        { serverId: 'my.peer', tools: [tool('say hi')], qualified: true },
        { serverId: 'p'.repeat(60), tools: [tool('chat')], qualified: true },
      ]).keys(),
    ];
    expect(name).toBe('my_peer--say_hi');
    expect(long).toMatch(/^p+-*[a-z_]*_[0-9a-f]{8}$/);
    expect(long!.length).toBe(64);
  });
});

describe('a call', () => {
  /** The SDK client's one method a streaming call uses, recording what it was sent. */
  function fakeClient(events: StreamResponse[]) {
    const sent: unknown[] = [];
    const client = {
      async *sendMessageStream(request: unknown) {
        sent.push(request);
        for (const e of await Promise.resolve(events)) yield e;
      },
      cancelTask: () => Promise.resolve(),
    } as unknown as Client;
    return { client, sent };
  }
  const target = (client: Client) => ({
    name: 'peer',
    client,
    streaming: true,
    timeout: 5_000,
    maxHops: 3,
    maxBytes: 1_000,
  });
  const completed = (taskId: string): StreamResponse => ({
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId,
        contextId: 'c',
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
        metadata: undefined,
      },
    },
  });
  const chunk = (value: string, append: boolean): StreamResponse => ({
    payload: {
      $case: 'artifactUpdate',
      value: {
        taskId: 't',
        contextId: 'c',
        append,
        lastChunk: false,
        metadata: undefined,
        artifact: {
          artifactId: 'a',
          name: '',
          description: '',
          extensions: [],
          metadata: undefined,
          parts: [{ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' }],
        },
      },
    },
  });

  it('past the hop limit is refused before anything is sent', async () => {
    const { client, sent } = fakeClient([completed('t')]);
    const result = await callA2a(target(client), { message: 'hi' }, undefined, { [HOPS_META_KEY]: 4 });
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('the limit is 3') as unknown }],
    });
    expect(sent).toEqual([]);
  });

  it('at the limit is sent, with the count in the message metadata, and the streamed chunks joined', async () => {
    const { client, sent } = fakeClient([chunk('Sunny, ', false), chunk('22 °C', true), completed('t')]);
    const result = await callA2a(target(client), { message: 'weather?' }, undefined, { [HOPS_META_KEY]: 3 });
    expect(result).toEqual({ content: [{ type: 'text', text: 'Sunny, 22 °C' }] });
    expect(sent).toMatchObject([
      { message: { metadata: { [HOPS_META_KEY]: 3 }, parts: [{ content: { $case: 'text', value: 'weather?' } }] } },
    ]);
  });

  it('without a hop count (a direct execution) sends no metadata', () => {
    expect(a2aMessage('x', undefined).metadata).toBeUndefined();
  });

  it('caps the reply text like tool results', async () => {
    const { client } = fakeClient([chunk('x'.repeat(5_000), false), completed('t')]);
    const result = await callA2a(target(client), { message: 'much' });
    const text = (result.content[0] as { text: string }).text;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1_000);
    expect(text).toMatch(/\[\.\.\. truncated \d+ bytes by agentd\]$/);
  });

  it('reads parts: text joined, data as JSON and files as notes on their own lines', () => {
    const part = (content: unknown) =>
      ({ content, metadata: undefined, filename: 'f.png', mediaType: 'image/png' }) as never;
    expect(
      partsText([
        part({ $case: 'text', value: 'a' }),
        part({ $case: 'text', value: 'b' }),
        part({ $case: 'data', value: { n: 1 } }),
        part({ $case: 'raw', value: Buffer.alloc(3) }),
      ]),
    ).toBe('ab\n{"n":1}\n[file: f.png, 3 bytes]');
  });
});

describe('a2aAgents in the agent file', () => {
  const llm = { model: 'm', apiKey: 'k' };

  it('takes url, headers and timeout (default 120000 ms)', () => {
    const config = parseConfig({
      llm,
      a2aAgents: { peer: { url: 'http://127.0.0.1:3002', headers: { Authorization: 'Bearer x' } } },
    });
    expect(config.a2aAgents.peer).toEqual({
      url: 'http://127.0.0.1:3002',
      headers: { Authorization: 'Bearer x' },
      timeout: 120_000,
    });
  });

  it('refuses a name that mcpServers uses too, and URLs that are not http(s)', () => {
    expect(() =>
      parseConfig({
        llm,
        mcpServers: { peer: { type: 'http', baseUrl: 'http://127.0.0.1:1/mcp' } },
        a2aAgents: { peer: { url: 'http://127.0.0.1:2' } },
      }),
    ).toThrow(/a2aAgents: an A2A agent may not share its name/);
    expect(() => parseConfig({ llm, a2aAgents: { peer: { url: 'file:///etc/passwd' } } })).toThrow(
      /a2aAgents\.peer\.url/,
    );
  });
});
