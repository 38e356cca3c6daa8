/**
 * What a connection offers besides tools, in either era: the client capabilities declared from the config (`roots`
 * only when it lists roots; the MCP Apps extension unless `apps: false`, app-capability.ts), the server's notifications
 * as ServerNotices, and resource, prompt and logging requests.
 * - A list change the config turns off (`listChanged.<list>: false`) or the server does not declare is ignored.
 * - `afterConnect` asks for `logLevel` in the 2025 era (2026-07-28 sends it in each call's `_meta`); refusal is logged.
 * - Every request is bounded by `timeout`. A feature the server does not offer lists as empty; reading from it fails.
 */
import type { Client, ClientCapabilities, ListChangedHandlers, Tool } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../../config/schema.ts';
import type { McpLogLevel } from '../../config/server-features.ts';
import type { Logger } from '../../log/index.ts';
import { appCapability } from './app-capability.ts';
import { elicitationCapability } from './elicitation.ts';

/** Something a server told agentd on its own. */
export type ServerNotice =
  | { type: 'log'; level: McpLogLevel; logger?: string; data: unknown }
  | { type: 'resourceUpdated'; uri: string }
  | { type: 'listChanged'; list: 'resources' | 'prompts' };

const MAX_PAGES = 100;

export function clientCapabilities(config: McpServerConfig): ClientCapabilities {
  return {
    ...(config.roots && { roots: { listChanged: true } }),
    ...elicitationCapability(config),
    ...appCapability(config),
  };
}

/** A root as `roots/list` answers it, named by the last path segment of its URI (or the URI). */
const rootOf = (uri: string) => ({ uri, name: decodeURIComponent(uri.replace(/\/+$/, '').split('/').pop() || uri) });

type NoticeParams = { level?: McpLogLevel; logger?: string; data?: unknown; uri?: string } | undefined;

/** Registers the roots and notification handlers (before `connect`; either era). */
export function attachFeatures(
  client: Client,
  config: McpServerConfig,
  onNotice: (notice: ServerNotice) => void,
): { roots: string[] } {
  const state = { roots: config.roots ?? [] };
  if (config.roots) client.setRequestHandler('roots/list', () => ({ roots: state.roots.map(rootOf) }));
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

export async function afterConnect(client: Client, config: McpServerConfig, log: Logger): Promise<void> {
  if (!config.logLevel || client.getProtocolEra() === 'modern' || !client.getServerCapabilities()?.logging) return;
  await client
    .setLoggingLevel(config.logLevel, { timeout: config.timeout })
    .catch((err: unknown) => log.warn({ err }, 'the server refused logging/setLevel'));
}

/** The `key` items of every page (at most MAX_PAGES); `read` gets each page's cursor. */
async function allPages<K extends string, P extends Record<K, unknown[]> & { nextCursor?: string | undefined }>(
  key: K,
  read: (page: { cursor: string } | undefined) => Promise<P>,
): Promise<P[K]> {
  const all: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await read(cursor === undefined ? undefined : { cursor });
    all.push(...result[key]);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return all as P[K];
}

/** The resource and prompt requests of one connection. */
export type ServerFeatures = ReturnType<typeof serverFeatures>;

export function serverFeatures(client: Client, config: McpServerConfig, roots: { roots: string[] }) {
  const options = { timeout: config.timeout };
  const offers = (feature: 'resources' | 'prompts') => client.getServerCapabilities()?.[feature] !== undefined;
  const mustOffer = (feature: 'resources' | 'prompts') => {
    if (!offers(feature)) throw new Error(`the server does not offer ${feature}`);
  };
  return {
    async listResources() {
      if (!offers('resources')) return { resources: [], resourceTemplates: [] };
      const resources = await allPages('resources', (page) => client.listResources(page, options));
      const resourceTemplates = await allPages('resourceTemplates', (page) =>
        client.listResourceTemplates(page, options),
      );
      return { resources, resourceTemplates };
    },
    async readResource(uri: string) {
      mustOffer('resources');
      return await client.readResource({ uri }, options);
    },
    /** `resources/subscribe` (true) or `resources/unsubscribe` (false). */
    async subscribe(uri: string, on: boolean): Promise<void> {
      mustOffer('resources');
      if (!client.getServerCapabilities()?.resources?.subscribe)
        throw new Error('the server does not offer resource subscriptions');
      await (on ? client.subscribeResource({ uri }, options) : client.unsubscribeResource({ uri }, options));
    },
    async listPrompts() {
      if (!offers('prompts')) return [];
      return await allPages('prompts', (page) => client.listPrompts(page, options));
    },
    async getPrompt(name: string, args: Record<string, string>) {
      mustOffer('prompts');
      return await client.getPrompt({ name, arguments: args }, options);
    },
    /** Replaces the roots offered; told to the server in the 2025 era (2026-07-28: it reads them at its next request). */
    async setRoots(uris: string[]): Promise<void> {
      roots.roots = uris;
      if (config.roots && client.getProtocolEra() !== 'modern') await client.sendRootsListChanged();
    },
  };
}
