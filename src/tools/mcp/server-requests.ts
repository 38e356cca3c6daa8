/**
 * Resources and prompts of a server, for REST and for messages (`mcp.attach`).
 * - Unknown server: SERVER_NOT_FOUND. Not connected: lists are empty; reading, subscribing or getting is
 *   TOOL_EXECUTION_FAILED (details { serverId, reason }), as is every server failure.
 * - Subscriptions are per subscriber: the server is subscribed while anyone follows the URI, and again on each new
 *   connection (`subscribeAgain`).
 * - A read resource is at most `maxResultBytes` (text plus decoded blob bytes); blobs stay base64.
 * - Prompt arguments are strings: a missing required one is MISSING_FIELD (details { field, promptName, serverId }),
 *   an unknown prompt or a non-string value INVALID_REQUEST.
 * - `attach`: texts capped at `maxModelBytes` with the marker; image blobs as images while the message's images stay
 *   within MAX_ATTACHED_IMAGE_BYTES decoded, else (and any other blob) a one-line note (request-shapes.ts).
 */
import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/client';
import { AppError, type ErrorCode } from '../../errors/index.ts';
import type { Attached, AttachedResource } from '../../conversation/attachments.ts';
import type { Logger } from '../../log/index.ts';
import type { McpConnection } from './connection.ts';
import { describe } from './call-error.ts';
import type { AttachRequest, PromptRecord, PromptResult, ResourceContents, ResourceList } from '../messages.ts';
import { capText } from '../../conversation/tool-shapes.ts';
import {
  attachedMessage,
  attachedResources,
  contentsBytes,
  imageBudget,
  opt,
  promptArgumentsFault,
  promptRecord,
  resourceContents,
  resourceList,
} from './request-shapes.ts';
import { liveConnection, type ServerEntry } from './server-entry.ts';

export interface ServerRequestDeps {
  mustFind: (serverId: string) => ServerEntry;
  /** The cap of text the model reads (toolResultMaxBytes). */
  maxModelBytes: number;
}

/** Subscribes a server's new connection again to every URI someone still follows; a refusal is logged. */
export function subscribeAgain(
  connection: McpConnection,
  subscriptions: ReadonlyMap<string, unknown>,
  log: Logger,
): void {
  for (const uri of subscriptions.keys()) {
    connection.features
      .subscribe(uri, true)
      .catch((err: unknown) => log.warn({ err, uri }, 'subscribing again to a resource failed'));
  }
}

export function createServerRequests(deps: ServerRequestDeps) {
  const { mustFind } = deps;
  const failed = (serverId: string, reason: string) =>
    new AppError('TOOL_EXECUTION_FAILED', `MCP server "${serverId}": ${reason}`, { serverId, reason });
  /** Runs a request on a connected server; its failure is TOOL_EXECUTION_FAILED. */
  const onServer = async <T>(serverId: string, work: (c: McpConnection, s: ServerEntry) => Promise<T>): Promise<T> => {
    const server = mustFind(serverId);
    const connection = liveConnection(server);
    if (!connection) throw failed(server.name, 'the server is not connected');
    try {
      return await work(connection, server);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw failed(server.name, describe(error, server.config.timeout));
    }
  };

  async function listResources(serverId: string): Promise<ResourceList> {
    if (!liveConnection(mustFind(serverId))) return { resources: [], resourceTemplates: [] };
    return resourceList(await onServer(serverId, (c) => c.features.listResources()));
  }

  async function read(serverId: string, uri: string): Promise<{ server: ServerEntry; result: ReadResourceResult }> {
    return await onServer(serverId, async (c, server) => {
      const result = await c.features.readResource(uri);
      const bytes = contentsBytes(result.contents);
      const { maxResultBytes } = server.config;
      if (bytes > maxResultBytes)
        throw failed(server.name, `resource ${uri} is ${bytes} bytes, over maxResultBytes (${maxResultBytes})`);
      return { server, result };
    });
  }

  async function readResource(serverId: string, uri: string): Promise<ResourceContents> {
    const { server, result } = await read(serverId, uri);
    return { serverId: server.name, uri, contents: resourceContents(result.contents) };
  }

  /** The server is asked at the first subscriber (a refusal records nothing) and told when the last one leaves. */
  async function subscribeResource(serverId: string, uri: string, subscribe: boolean, subscriber: string) {
    const server = mustFind(serverId);
    if (subscribe) {
      if (!server.subscriptions.has(uri)) await onServer(serverId, (c) => c.features.subscribe(uri, true));
      server.subscriptions.set(uri, (server.subscriptions.get(uri) ?? new Set<string>()).add(subscriber));
    } else {
      const subscribers = server.subscriptions.get(uri);
      if (subscribers?.delete(subscriber) && subscribers.size === 0) {
        server.subscriptions.delete(uri);
        // A server that is not connected holds no subscription (a new connection gets only the followed ones).
        if (liveConnection(server)) await onServer(serverId, (c) => c.features.subscribe(uri, false));
      }
    }
    return { serverId: server.name, uri, subscribed: subscribe };
  }

  async function listPrompts(serverId: string): Promise<PromptRecord[]> {
    if (!liveConnection(mustFind(serverId))) return [];
    return (await onServer(serverId, (c) => c.features.listPrompts())).map(promptRecord);
  }

  async function fetchPrompt(
    serverId: string,
    name: string,
    args: unknown,
  ): Promise<{ server: ServerEntry; result: GetPromptResult; args: Record<string, string> }> {
    return await onServer(serverId, async (c, server) => {
      const refuse = (message: string, field?: string, code: ErrorCode = 'INVALID_REQUEST') =>
        new AppError(code, message, { ...(field !== undefined && { field }), promptName: name, serverId: server.name });
      const prompt = (await c.features.listPrompts()).find((p) => p.name === name);
      if (!prompt) throw refuse(`No prompt "${name}" on server "${server.name}"`);
      const given = args ?? {};
      const fault = promptArgumentsFault(prompt, given);
      if (fault) throw refuse(fault.message, fault.field, fault.missing ? 'MISSING_FIELD' : 'INVALID_REQUEST');
      const strings = given as Record<string, string>;
      return { server, result: await c.features.getPrompt(name, strings), args: strings };
    });
  }

  async function getPrompt(serverId: string, name: string, args: unknown): Promise<PromptResult> {
    const { server, result } = await fetchPrompt(serverId, name, args);
    return {
      serverId: server.name,
      name,
      ...opt('description', result.description),
      messages: result.messages.map((m) => ({ role: m.role, content: m.content })),
    };
  }

  const cap = (text: string) => capText(text, deps.maxModelBytes).text;

  async function attach(request: AttachRequest): Promise<Attached> {
    const fits = imageBudget();
    const resources: AttachedResource[] = [];
    for (const { serverId, uri } of request.resources ?? []) {
      const { server, result } = await read(serverId, uri);
      resources.push(...attachedResources(server.name, result.contents, cap, fits));
    }
    let prompt: Attached['prompt'];
    if (request.prompt) {
      const { serverId, name } = request.prompt;
      const { server, result, args } = await fetchPrompt(serverId, name, request.prompt.arguments);
      prompt = {
        serverId: server.name,
        name,
        arguments: args,
        messages: result.messages.map((m) => attachedMessage(m, cap, fits)),
      };
    }
    return { ...(resources.length > 0 && { resources }), ...(prompt && { prompt }) };
  }

  return { listResources, readResource, subscribeResource, listPrompts, getPrompt, attach };
}
