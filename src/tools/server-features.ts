/**
 * What a connection offers besides tools: the client capabilities agentd declares (from the
 * server's config), the server's notifications it relays (logs, resource updates, list changes),
 * and the requests of the resources, prompts and logging features.
 *
 * Contracts:
 * - `clientCapabilities` declares `roots` (with `listChanged`) only when the config lists roots, and
 *   elicitation as elicitation.ts says; sampling is never declared here.
 * - `attachFeatures` registers the handlers before `connect` (roots/list answers the config's roots,
 *   the notifications become `ServerNotice`s). A list change the config turns off
 *   (`listChanged.<list>: false`) is ignored.
 * - `afterConnect` asks for `logLevel` when the config names one and the server offers logging; a
 *   refusal is logged, never fatal.
 * - Every request is bounded by the server's `timeout`. A feature the server does not offer lists as
 *   empty; reading or getting from it fails with a reason for a person.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ClientCapabilities,
  type GetPromptResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/schema.ts';
import type { McpLogLevel } from '../config/server-features.ts';
import type { Logger } from '../log/index.ts';
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
export const rootsList = (uris: readonly string[]): { roots: { uri: string; name: string }[] } => ({ roots: uris.map(rootOf) });

type NoticeParams = { level?: McpLogLevel; logger?: string; data?: unknown; uri?: string } | undefined;
const NOTICE_SCHEMAS = {
  'notifications/message': LoggingMessageNotificationSchema,
  'notifications/resources/updated': ResourceUpdatedNotificationSchema,
  'notifications/resources/list_changed': ResourceListChangedNotificationSchema,
  'notifications/prompts/list_changed': PromptListChangedNotificationSchema,
} as const;
export type NoticeMethod = keyof typeof NOTICE_SCHEMAS;

/** The server notifications relayed, by method, each turning its params into a notice (a list change the config turns off is left out). */
export function noticeHandlers(config: McpServerConfig, onNotice: (notice: ServerNotice) => void): Partial<Record<NoticeMethod, (params: NoticeParams) => void>> {
  return {
    'notifications/message': (p) => onNotice({ type: 'log', level: p?.level ?? 'info', ...(p?.logger !== undefined && { logger: p.logger }), data: p?.data }),
    'notifications/resources/updated': (p) => onNotice({ type: 'resourceUpdated', uri: p?.uri ?? '' }),
    ...(config.listChanged?.resources !== false && { 'notifications/resources/list_changed': () => onNotice({ type: 'listChanged', list: 'resources' }) }),
    ...(config.listChanged?.prompts !== false && { 'notifications/prompts/list_changed': () => onNotice({ type: 'listChanged', list: 'prompts' }) }),
  };
}

export function attachFeatures(client: Client, config: McpServerConfig, onNotice: (notice: ServerNotice) => void): { roots: string[] } {
  const state = { roots: config.roots ?? [] };
  if (config.roots) client.setRequestHandler(ListRootsRequestSchema, () => rootsList(state.roots));
  for (const [method, handler] of Object.entries(noticeHandlers(config, onNotice)) as [NoticeMethod, (params: NoticeParams) => void][]) {
    client.setNotificationHandler(NOTICE_SCHEMAS[method], ({ params }) => handler(params as NoticeParams));
  }
  return state;
}

export async function afterConnect(client: Pick<Client, 'getServerCapabilities' | 'setLoggingLevel'>, config: McpServerConfig, log: Logger): Promise<void> {
  if (!config.logLevel || !client.getServerCapabilities()?.logging) return;
  await client.setLoggingLevel(config.logLevel, { timeout: config.timeout }).catch((err: unknown) => log.warn({ err }, 'the server refused logging/setLevel'));
}

async function allPages<T>(read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
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

/** The requests `serverFeatures` makes; the SDK v2 client has them too, with the same shapes. */
export type FeatureClient = Pick<
  Client,
  'getServerCapabilities' | 'listResources' | 'listResourceTemplates' | 'readResource' | 'subscribeResource' | 'unsubscribeResource' | 'listPrompts' | 'getPrompt' | 'sendRootsListChanged'
>;

/**
 * The features of a connection. `era: 'modern'` (2026-07-28) has no `roots/list_changed`: a server asks
 * for the roots inside each request, so a change is only kept for the next one.
 */
export function serverFeatures(client: FeatureClient, config: McpServerConfig, roots: { roots: string[] }, era: 'legacy' | 'modern' = 'legacy'): ServerFeatures {
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
      if (!client.getServerCapabilities()?.resources?.subscribe) throw new Error('the server does not offer resource subscriptions');
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
      if (config.roots && era === 'legacy') await client.sendRootsListChanged();
    },
  };
}
