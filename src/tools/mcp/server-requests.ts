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
 *   within MAX_ATTACHED_IMAGE_BYTES decoded, else (and any other blob) a one-line note.
 */
import type { GetPromptResult, Prompt, ReadResourceResult } from '@modelcontextprotocol/client';
import { AppError, type ErrorCode } from '../../errors/index.ts';
import type { Attached, AttachedPromptMessage, AttachedResource } from '../../conversation/attachments.ts';
import type { Logger } from '../../log/index.ts';
import type { McpConnection } from './connection.ts';
import { describe } from './call-error.ts';
import type { AttachRequest, PromptRecord, PromptResult, ResourceContents, ResourceList } from '../messages.ts';
import { capText } from '../../conversation/tool-shapes.ts';
import { liveConnection, type ServerEntry } from './server-entry.ts';

export interface ServerRequestDeps {
  mustFind: (serverId: string) => ServerEntry;
  /** The cap of text the model reads (toolResultMaxBytes). */
  maxModelBytes: number;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const opt = <K extends string, V>(key: K, value: V | undefined) =>
  value === undefined ? {} : ({ [key]: value } as { [P in K]: V });
const blobBytes = (base64: string) => Buffer.byteLength(base64, 'base64');
const textOf = (x: object) => ('text' in x && typeof x.text === 'string' ? x.text : undefined);
const blobOf = (x: object) => ('blob' in x && typeof x.blob === 'string' ? x.blob : undefined);

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

/** Decoded bytes of all the images one message may attach from resources and a prompt. */
const MAX_ATTACHED_IMAGE_BYTES = 10 * 1024 * 1024;

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
    const list = await onServer(serverId, (c) => c.features.listResources());
    return {
      resources: list.resources.map((r) => ({
        uri: r.uri,
        name: r.name,
        ...opt('title', r.title),
        ...opt('description', r.description),
        ...opt('mimeType', r.mimeType),
        ...opt('size', r.size),
      })),
      resourceTemplates: list.resourceTemplates.map((t) => ({
        uriTemplate: t.uriTemplate,
        name: t.name,
        ...opt('title', t.title),
        ...opt('description', t.description),
        ...opt('mimeType', t.mimeType),
      })),
    };
  }

  async function read(serverId: string, uri: string): Promise<{ server: ServerEntry; result: ReadResourceResult }> {
    return await onServer(serverId, async (c, server) => {
      const result = await c.features.readResource(uri);
      const bytes = result.contents.reduce((n, x) => {
        const text = textOf(x);
        const blob = blobOf(x);
        return n + (text !== undefined ? Buffer.byteLength(text) : blob !== undefined ? blobBytes(blob) : 0);
      }, 0);
      const { maxResultBytes } = server.config;
      if (bytes > maxResultBytes)
        throw failed(server.name, `resource ${uri} is ${bytes} bytes, over maxResultBytes (${maxResultBytes})`);
      return { server, result };
    });
  }

  async function readResource(serverId: string, uri: string): Promise<ResourceContents> {
    const { server, result } = await read(serverId, uri);
    const contents = result.contents.map((x) => ({
      uri: x.uri,
      ...opt('mimeType', x.mimeType),
      ...opt('text', textOf(x)),
      ...opt('blob', blobOf(x)),
    }));
    return { serverId: server.name, uri, contents };
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

  const promptRecord = (p: Prompt): PromptRecord => ({
    name: p.name,
    ...opt('title', p.title),
    ...opt('description', p.description),
    arguments: (p.arguments ?? []).map((a) => ({
      name: a.name,
      ...opt('description', a.description),
      required: a.required === true,
    })),
  });

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
      if (!isPlainObject(given)) throw refuse(`Arguments of prompt "${name}" must be an object`);
      const bad = Object.entries(given).find(([, v]) => typeof v !== 'string');
      if (bad) throw refuse(`Argument "${bad[0]}" of prompt "${name}" must be a string`, bad[0]);
      const missing = (prompt.arguments ?? []).find((a) => a.required && given[a.name] === undefined);
      if (missing) throw refuse(`Prompt "${name}" needs the argument "${missing.name}"`, missing.name, 'MISSING_FIELD');
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
  const isImage = (mime: string | undefined) => mime !== undefined && /^image\/(png|jpeg|gif|webp)$/i.test(mime);

  function toAttachedMessage(
    m: GetPromptResult['messages'][number],
    fits: (base64: string) => boolean,
  ): AttachedPromptMessage {
    const c = m.content;
    if (c.type === 'text') return { role: m.role, content: cap(c.text) };
    if (c.type === 'image' && m.role === 'user' && isImage(c.mimeType) && fits(c.data))
      return { role: m.role, content: '', images: [{ mimeType: c.mimeType, base64: c.data }] };
    if (c.type === 'resource' && 'text' in c.resource && typeof c.resource.text === 'string')
      return { role: m.role, content: `[resource ${c.resource.uri}]\n${cap(c.resource.text)}` };
    if (c.type === 'resource' || c.type === 'resource_link')
      return { role: m.role, content: `[resource ${c.type === 'resource' ? c.resource.uri : c.uri}]` };
    return { role: m.role, content: `[${c.type}${'mimeType' in c ? `: ${String(c.mimeType)}` : ''}]` };
  }

  async function attach(request: AttachRequest): Promise<Attached> {
    let imageBytes = 0;
    const fits = (base64: string) => {
      const bytes = blobBytes(base64);
      if (imageBytes + bytes > MAX_ATTACHED_IMAGE_BYTES) return false;
      imageBytes += bytes;
      return true;
    };
    const resources: AttachedResource[] = [];
    for (const { serverId, uri } of request.resources ?? []) {
      const { server, result } = await read(serverId, uri);
      for (const x of result.contents) {
        const base = { serverId: server.name, uri: x.uri, ...opt('mimeType', x.mimeType) };
        const text = textOf(x);
        const blob = blobOf(x);
        if (text !== undefined) resources.push({ ...base, text: cap(text) });
        else if (blob !== undefined && isImage(x.mimeType) && fits(blob))
          resources.push({ ...base, image: { mimeType: x.mimeType!, base64: blob } });
        else if (blob !== undefined)
          resources.push({ ...base, text: `[binary ${x.mimeType ?? 'data'}, ${blobBytes(blob)} bytes]` });
      }
    }
    let prompt: Attached['prompt'];
    if (request.prompt) {
      const { serverId, name } = request.prompt;
      const { server, result, args } = await fetchPrompt(serverId, name, request.prompt.arguments);
      prompt = {
        serverId: server.name,
        name,
        arguments: args,
        messages: result.messages.map((m) => toAttachedMessage(m, fits)),
      };
    }
    return { ...(resources.length > 0 && { resources }), ...(prompt && { prompt }) };
  }

  return { listResources, readResource, subscribeResource, listPrompts, getPrompt, attach };
}
