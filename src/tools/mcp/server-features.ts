/**
 * What a connection offers besides tools, in either era: the client capabilities declared from the config (`roots`
 * only when it lists roots), the server's notifications as ServerNotices, and resource, prompt and logging requests.
 * - A list change the config turns off (`listChanged.<list>: false`) or the server does not declare is ignored.
 * - `afterConnect` asks for `logLevel` in the 2025 era (2026-07-28 sends it in each call's `_meta`); refusal is logged.
 * - Every request is bounded by `timeout`. A feature the server does not offer lists as empty; reading from it fails.
 */
import type {
  Client,
  ClientCapabilities,
  GetPromptResult,
  ListChangedHandlers,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../../config/schema.ts';
import type { McpLogLevel } from '../../config/server-features.ts';
import type { Logger } from '../../log/index.ts';
import { elicitationCapability } from './elicitation.ts';

/** Something a server told agentd on its own. */
export type ServerNotice =
  | { type: 'log'; level: McpLogLevel; logger?: string; data: unknown }
  | { type: 'resourceUpdated'; uri: string }
  | { type: 'listChanged'; list: 'resources' | 'prompts' };

/** The resource and prompt requests of one connection. */
export interface ServerFeatures {
  listResources(): Promise<{ resources: Resource[]; resourceTemplates: ResourceTemplate[] }>;
  readResource(uri: string): Promise<ReadResourceResult>;
  /** `resources/subscribe` (true) or `resources/unsubscribe` (false). */
  subscribe(uri: string, on: boolean): Promise<void>;
  listPrompts(): Promise<Prompt[]>;
  getPrompt(name: string, args: Record<string, string>): Promise<GetPromptResult>;
  /** Replaces the roots offered and tells the server (`notifications/roots/list_changed`). */
  setRoots(uris: string[]): Promise<void>;
}

const MAX_PAGES = 100;

export function clientCapabilities(config: McpServerConfig): ClientCapabilities {
  return { ...(config.roots && { roots: { listChanged: true } }), ...elicitationCapability(config) };
}

/** The name of a root: the last path segment of its URI (or the URI). */
const rootOf = (uri: string) => ({ uri, name: decodeURIComponent(uri.replace(/\/+$/, '').split('/').pop() || uri) });

/** The roots offered, as `roots/list` answers them. */
const rootsList = (uris: readonly string[]): { roots: { uri: string; name: string }[] } => ({
  roots: uris.map(rootOf),
});

type NoticeParams = { level?: McpLogLevel; logger?: string; data?: unknown; uri?: string } | undefined;

/** Registers the roots and notification handlers (before `connect`; either era). */
export function attachFeatures(
  client: Client,
  config: McpServerConfig,
  onNotice: (notice: ServerNotice) => void,
): { roots: string[] } {
  const state = { roots: config.roots ?? [] };
  if (config.roots) client.setRequestHandler('roots/list', () => rootsList(state.roots));
  client.setNotificationHandler('notifications/message', ({ params: p }) => {
    const params = p as NoticeParams;
    onNotice({
      type: 'log',
      level: params?.level ?? 'info',
      ...(params?.logger !== undefined && { logger: params.logger }),
      data: params?.data,
    });
  });
  client.setNotificationHandler('notifications/resources/updated', ({ params }) =>
    onNotice({ type: 'resourceUpdated', uri: (params as NoticeParams)?.uri ?? '' }),
  );
  return state;
}

/** The client's `listChanged` option: the lists the config follows. */
export function listChangedHandlers(
  config: McpServerConfig,
  onNotice: (notice: ServerNotice) => void,
  onTools: (tools: Tool[]) => void,
  log: Logger,
): ListChangedHandlers {
  const notice = (list: 'resources' | 'prompts') => ({
    autoRefresh: false,
    onChanged: () => onNotice({ type: 'listChanged', list }),
  });
  return {
    ...(config.listChanged?.tools !== false && {
      tools: {
        onChanged: (error: Error | null, tools: Tool[] | null) => {
          if (error || !tools) return log.warn({ err: error }, 'refreshing the tool list failed');
          onTools(tools);
        },
      },
    }),
    ...(config.listChanged?.resources !== false && { resources: notice('resources') }),
    ...(config.listChanged?.prompts !== false && { prompts: notice('prompts') }),
  };
}

export async function afterConnect(
  client: Pick<Client, 'getServerCapabilities' | 'setLoggingLevel' | 'getProtocolEra'>,
  config: McpServerConfig,
  log: Logger,
): Promise<void> {
  if (!config.logLevel || client.getProtocolEra() === 'modern' || !client.getServerCapabilities()?.logging) return;
  await client
    .setLoggingLevel(config.logLevel, { timeout: config.timeout })
    .catch((err: unknown) => log.warn({ err }, 'the server refused logging/setLevel'));
}

async function allPages<T>(
  read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { items, nextCursor } = await read(cursor);
    all.push(...items);
    cursor = nextCursor;
    if (cursor === undefined) break;
  }
  return all;
}

/** The requests `serverFeatures` makes. */
export type FeatureClient = Pick<
  Client,
  | 'getServerCapabilities'
  | 'getProtocolEra'
  | 'listResources'
  | 'listResourceTemplates'
  | 'readResource'
  | 'subscribeResource'
  | 'unsubscribeResource'
  | 'listPrompts'
  | 'getPrompt'
  | 'sendRootsListChanged'
>;

/** The features of a connection. In 2026-07-28 (no `roots/list_changed`) new roots only reach the next request. */
export function serverFeatures(
  client: FeatureClient,
  config: McpServerConfig,
  roots: { roots: string[] },
): ServerFeatures {
  const options = { timeout: config.timeout };
  const page = (cursor: string | undefined) => (cursor === undefined ? undefined : { cursor });
  const offers = (feature: 'resources' | 'prompts') => client.getServerCapabilities()?.[feature] !== undefined;
  const mustOffer = (feature: 'resources' | 'prompts') => {
    if (!offers(feature)) throw new Error(`the server does not offer ${feature}`);
  };
  return {
    async listResources() {
      if (!offers('resources')) return { resources: [], resourceTemplates: [] };
      const resources = await allPages(async (c) => {
        const r = await client.listResources(page(c), options);
        return { items: r.resources, nextCursor: r.nextCursor };
      });
      const resourceTemplates = await allPages(async (c) => {
        const r = await client.listResourceTemplates(page(c), options);
        return { items: r.resourceTemplates, nextCursor: r.nextCursor };
      });
      return { resources, resourceTemplates };
    },
    async readResource(uri) {
      mustOffer('resources');
      return await client.readResource({ uri }, options);
    },
    async subscribe(uri, on) {
      mustOffer('resources');
      if (!client.getServerCapabilities()?.resources?.subscribe)
        throw new Error('the server does not offer resource subscriptions');
      await (on ? client.subscribeResource({ uri }, options) : client.unsubscribeResource({ uri }, options));
    },
    async listPrompts() {
      if (!offers('prompts')) return [];
      return await allPages(async (c) => {
        const r = await client.listPrompts(page(c), options);
        return { items: r.prompts, nextCursor: r.nextCursor };
      });
    },
    async getPrompt(name, args) {
      mustOffer('prompts');
      return await client.getPrompt({ name, arguments: args }, options);
    },
    async setRoots(uris) {
      roots.roots = uris;
      if (config.roots && client.getProtocolEra() !== 'modern') await client.sendRootsListChanged();
    },
  };
}
