/** A tool server's resources and prompts as the REST routes answer them: MCP's shapes narrowed (records.ts's rules). */
import { z } from 'zod';

const described = {
  name: z.string(),
  title: z.string().exactOptional(),
  description: z.string().exactOptional(),
};

const resourceRecord = z.object({
  uri: z.string(),
  ...described,
  mimeType: z.string().exactOptional(),
  size: z.number().exactOptional().describe('bytes, when the server says'),
});

const resourceTemplateRecord = z.object({
  uriTemplate: z.string().describe('RFC 6570 URI template'),
  ...described,
  mimeType: z.string().exactOptional(),
});

export const resourceList = z.object({
  resources: z.array(resourceRecord),
  resourceTemplates: z.array(resourceTemplateRecord),
});
export type ResourceList = z.output<typeof resourceList>;

/** One content of a read resource: `text`, or `blob` (base64) with its MIME type. */
const resourceContent = z.object({
  uri: z.string(),
  mimeType: z.string().exactOptional(),
  text: z.string().exactOptional(),
  blob: z.string().exactOptional().describe('base64'),
});

export const resourceContents = z.object({ serverId: z.string(), uri: z.string(), contents: z.array(resourceContent) });
export type ResourceContents = z.output<typeof resourceContents>;

export const promptRecord = z.object({
  ...described,
  arguments: z.array(z.object({ name: z.string(), description: z.string().exactOptional(), required: z.boolean() })),
});
export type PromptRecord = z.output<typeof promptRecord>;

/** A prompt's messages; `content` is the MCP content block (text, image, audio, resource, resource_link). */
export const promptResult = z.object({
  serverId: z.string(),
  name: z.string(),
  description: z.string().exactOptional(),
  messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.looseObject({ type: z.string() }) })),
});
export type PromptResult = z.output<typeof promptResult>;
