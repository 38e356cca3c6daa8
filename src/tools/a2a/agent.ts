/**
 * A remote A2A agent as a tool server (`a2aAgents`, or `POST /api/connect-a2a-agent`), read as an McpConnection so
 * supervision, the catalogue, naming, policies and `…/execute` treat it like any server.
 * - `openA2aAgent` fetches `<url>/.well-known/agent-card.json` (v1.0, or 0.3 through the SDK's compatibility layer)
 *   within `timeout` and resolves once a JSON-RPC client for the card's endpoint exists; else rejects with a reason.
 * - One tool per skill, named by its id (the catalogue qualifies it), taking `{ message: string }`; no skills: `chat`.
 * - Every request carries the entry's headers, goes through the given fetch (a runtime entry's is pinned, redirects
 *   refused) and reads at most `maxBytes` per body or SSE event. Only the SDK's JSON-RPC transport is installed:
 *   its REST one would bring its own fetch.
 */
import type { AgentCard } from '@a2a-js/sdk';
import type { Tool } from '@modelcontextprotocol/client';
import type { A2aAgentConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import { callA2a } from './call.ts';
import type { McpConnection } from '../mcp/connection.ts';
import { limitedFetch } from '../mcp/limited-fetch.ts';
import type { FetchLike } from '../../egress/url-policy.ts';
import { messageOf } from '../../errors/index.ts';

export const A2A_INPUT_SCHEMA: Tool['inputSchema'] = {
  type: 'object',
  properties: { message: { type: 'string', description: 'What to ask or tell the agent' } },
  required: ['message'],
  additionalProperties: false,
};

const DEFAULT_SKILL = 'chat';

/** The tools a card offers: one per skill, in the card's order. */
export function cardTools(card: Pick<AgentCard, 'name' | 'description' | 'skills'>): Tool[] {
  const skills =
    card.skills.length > 0 ? card.skills : [{ id: DEFAULT_SKILL, name: 'chat', description: card.description }];
  return skills.map((skill) => ({
    name: skill.id,
    title: `${card.name}: ${skill.name || skill.id}`,
    description:
      `Ask the A2A agent "${card.name}" (skill ${skill.name || skill.id}). ${skill.description || card.description}`.trim(),
    inputSchema: A2A_INPUT_SCHEMA,
  }));
}

/** The SDK's client, loaded with the first A2A agent (an agent file without one never loads it). */
const a2aClient = () => import('@a2a-js/sdk/client');

/** A card as the SDK reads it (0.3 shapes turned into v1.0 ones). */
export async function normalizeCard(raw: unknown): Promise<AgentCard> {
  const { DefaultAgentCardResolver } = await a2aClient();
  return new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).normalizeAgentCard(raw);
}

/** Where an agent's card is: `/.well-known/agent-card.json` under its URL (its path kept, unlike the SDK's default). */
export const cardUrlOf = (url: string) => `${url.replace(/\/+$/, '')}/.well-known/agent-card.json`;

export interface A2aOpenOptions {
  name: string;
  config: A2aAgentConfig;
  log: Logger;
  /** The fetch every request goes through (global, or a runtime entry's pinned one). */
  fetch: FetchLike;
  /** Added after the config's own headers. */
  extraHeaders?: Record<string, string>;
  maxBytes: number;
  maxHops: number;
  signal?: AbortSignal;
}

const NO_FEATURES: McpConnection['features'] = {
  listResources: () => Promise.resolve({ resources: [], resourceTemplates: [] }),
  readResource: () => Promise.reject(new Error('A2A agents have no resources')),
  subscribe: () => Promise.reject(new Error('A2A agents have no resources')),
  listPrompts: () => Promise.resolve([]),
  getPrompt: () => Promise.reject(new Error('A2A agents have no prompts')),
  setRoots: () => Promise.resolve(),
};

export async function openA2aAgent(options: A2aOpenOptions): Promise<McpConnection> {
  const { config } = options;
  const headers = { ...config.headers, ...options.extraHeaders };
  const withHeaders: FetchLike = (url, init) => {
    const merged = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) merged.set(k, v);
    return options.fetch(url, { ...init, headers: merged });
  };
  const fetchImpl = limitedFetch(withHeaders, options.maxBytes) as typeof fetch;
  const attempt = AbortSignal.any([AbortSignal.timeout(config.timeout), ...(options.signal ? [options.signal] : [])]);
  const cardFetch = ((url: string | URL, init?: RequestInit) =>
    fetchImpl(url, { ...init, signal: attempt })) as typeof fetch;
  const cardUrl = cardUrlOf(config.url);
  const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } = await a2aClient();
  let card: AgentCard;
  try {
    card = await new DefaultAgentCardResolver({ fetchImpl: cardFetch, legacyCompat: { enabled: true } }).resolve(
      cardUrl,
      '',
    );
  } catch (error) {
    throw new Error(`fetching the agent card from ${cardUrl} failed: ${messageOf(error)}`, { cause: error });
  }
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  });
  const client = await factory.createFromAgentCard(card).catch((error: unknown) => {
    throw new Error(`the agent card offers no JSON-RPC endpoint agentd can use: ${messageOf(error)}`, { cause: error });
  });
  const target = {
    name: options.name,
    client,
    streaming: card.capabilities?.streaming === true,
    timeout: config.timeout,
    maxHops: options.maxHops,
    maxBytes: options.maxBytes,
  };
  const tools = cardTools(card);
  options.log.debug(
    { agent: card.name, version: client.protocolVersion, streaming: target.streaming, skills: tools.length },
    'A2A agent card read',
  );
  return {
    kind: 'a2a',
    pid: undefined,
    tools,
    callTool: (_skill, args, signal, meta) => callA2a(target, args, signal, meta),
    features: NO_FEATURES,
    capabilities: { client: {}, server: { tools: {} } },
    close: () => Promise.resolve(),
  };
}
