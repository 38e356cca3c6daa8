/**
 * What a connection offers besides tools: the client capabilities agentd declares (from the
 * server's config), the server's notifications it relays (logs, resource updates, list changes),
 * and the requests of the resources, prompts and logging features.
 *
 * Contracts:
 * - `clientCapabilities` declares `roots` (with `listChanged`) only when the config lists roots, and
 *   elicitation as elicitation.ts says; sampling is never declared here.
 * - `attachFeatures` registers the handlers before `connect`, for either protocol era: roots/list answers
 *   the config's roots, logs and resource updates become `ServerNotice`s. `listChangedHandlers` are the
 *   client's `listChanged` option: a changed tool list is re-read and handed on, a resource or prompt list
 *   change becomes a notice; a list change the config turns off (`listChanged.<list>: false`), or one the
 *   server does not declare, is ignored. (In 2026-07-28 they arrive on the `subscriptions/listen` stream the
 *   SDK opens for them.)
 * - `afterConnect` asks for `logLevel` when the config names one and the server offers logging (2025 era;
 *   in 2026-07-28 `logLevelMeta` travels in each call's `_meta`); a refusal is logged, never fatal.
 * - Every request is bounded by the server's `timeout`. A feature the server does not offer lists as
 *   empty; reading or getting from it fails with a reason for a person.
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
export const rootsList = (uris: readonly string[]): { roots: { uri: string; name: string }[] } => ({
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

/** The client's `listChanged` option: the lists the config follows (see the contracts). */
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

/** 2025 era: asks for the config's `logLevel` once connected (see the contracts). */
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

/**
 * The features of a connection. The 2026-07-28 era has no `roots/list_changed`: a server asks for the
 * roots inside each request, so a change is only kept for the next one.
 */
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
