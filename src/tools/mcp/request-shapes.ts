/**
 * How a server's resources and prompts are shown (server-requests.ts): as the records of REST and messages, and
 * as what a message attaches. Pure functions of what the server answered.
 * - Optional fields the server left out stay out (never `undefined`); blobs stay base64.
 * - Attached texts are capped by the caller's `cap`; images attach only while `fits` (the message's image budget,
 *   `imageBudget`) agrees, else (and any other blob) as a one-line note.
 */
import type { GetPromptResult, Prompt, ReadResourceResult } from '@modelcontextprotocol/client';
import type { AttachedPromptMessage, AttachedResource } from '../../conversation/attachments.ts';
import type { PromptRecord, ResourceContents, ResourceList } from '../messages.ts';
import type { ServerFeatures } from './server-features.ts';

/** Decoded bytes of all the images one message may attach from resources and a prompt. */
export const MAX_ATTACHED_IMAGE_BYTES = 10 * 1024 * 1024;

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const opt = <K extends string, V>(key: K, value: V | undefined) =>
  value === undefined ? {} : ({ [key]: value } as { [P in K]: V });
const blobBytes = (base64: string) => Buffer.byteLength(base64, 'base64');
const textOf = (x: object) => ('text' in x && typeof x.text === 'string' ? x.text : undefined);
const blobOf = (x: object) => ('blob' in x && typeof x.blob === 'string' ? x.blob : undefined);
const isImage = (mime: string | undefined) => mime !== undefined && /^image\/(png|jpeg|gif|webp)$/i.test(mime);

type Contents = ReadResourceResult['contents'];

/** A server's resources and templates as listed. */
export function resourceList(list: Awaited<ReturnType<ServerFeatures['listResources']>>): ResourceList {
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

/** The size of a read resource: its texts' bytes plus its blobs' decoded bytes. */
export const contentsBytes = (contents: Contents): number =>
  contents.reduce((n, x) => {
    const text = textOf(x);
    const blob = blobOf(x);
    return n + (text !== undefined ? Buffer.byteLength(text) : blob !== undefined ? blobBytes(blob) : 0);
  }, 0);

/** A read resource's contents as returned. */
export const resourceContents = (contents: Contents): ResourceContents['contents'] =>
  contents.map((x) => ({
    uri: x.uri,
    ...opt('mimeType', x.mimeType),
    ...opt('text', textOf(x)),
    ...opt('blob', blobOf(x)),
  }));

export const promptRecord = (p: Prompt): PromptRecord => ({
  name: p.name,
  ...opt('title', p.title),
  ...opt('description', p.description),
  arguments: (p.arguments ?? []).map((a) => ({
    name: a.name,
    ...opt('description', a.description),
    required: a.required === true,
  })),
});

/** What is wrong with a prompt's arguments (`field`: the argument; `missing`: a required one absent), if anything. */
export function promptArgumentsFault(
  prompt: Prompt,
  given: unknown,
): { message: string; field?: string; missing?: true } | undefined {
  const name = prompt.name;
  if (!isPlainObject(given)) return { message: `Arguments of prompt "${name}" must be an object` };
  const bad = Object.entries(given).find(([, v]) => typeof v !== 'string');
  if (bad) return { message: `Argument "${bad[0]}" of prompt "${name}" must be a string`, field: bad[0] };
  const missing = (prompt.arguments ?? []).find((a) => a.required && given[a.name] === undefined);
  if (missing)
    return { message: `Prompt "${name}" needs the argument "${missing.name}"`, field: missing.name, missing: true };
  return undefined;
}

/** The image budget of one message: `fits(base64)` takes an image's bytes from it while they fit. */
export function imageBudget(maxBytes = MAX_ATTACHED_IMAGE_BYTES): (base64: string) => boolean {
  let used = 0;
  return (base64) => {
    const bytes = blobBytes(base64);
    if (used + bytes > maxBytes) return false;
    used += bytes;
    return true;
  };
}

/** A read resource's contents as attached: texts capped, images while they fit, other blobs as a note. */
export function attachedResources(
  serverId: string,
  contents: Contents,
  cap: (text: string) => string,
  fits: (base64: string) => boolean,
): AttachedResource[] {
  const resources: AttachedResource[] = [];
  for (const x of contents) {
    const base = { serverId, uri: x.uri, ...opt('mimeType', x.mimeType) };
    const text = textOf(x);
    const blob = blobOf(x);
    if (text !== undefined) resources.push({ ...base, text: cap(text) });
    else if (blob !== undefined && isImage(x.mimeType) && fits(blob))
      resources.push({ ...base, image: { mimeType: x.mimeType!, base64: blob } });
    else if (blob !== undefined)
      resources.push({ ...base, text: `[binary ${x.mimeType ?? 'data'}, ${blobBytes(blob)} bytes]` });
  }
  return resources;
}

/** A prompt's message as attached: texts capped, a user's image while it fits, anything else as a note. */
export function attachedMessage(
  m: GetPromptResult['messages'][number],
  cap: (text: string) => string,
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
