/**
 * What a user message brings besides its text (resources, a prompt's messages), stored whole in its event so
 * history, replay and export reproduce what the model saw. `userTurn` is the model's view: the prompt's messages,
 * then the user's message (text, then each text resource under `[resource <uri>]`; its image, then each image
 * resource), omitted when it would be empty.
 */
import { z } from 'zod';
import type { ChatMessage, ImagePart } from './model-messages.ts';
import { image } from './session-event-fields.ts';

/** One content of a resource as the model gets it: text (capped) or an image; other binary is a note in `text`. */
const attachedResource = z.object({
  serverId: z.string(),
  uri: z.string(),
  mimeType: z.string().optional(),
  text: z.string().optional(),
  image: image.optional(),
});

/** One message of a prompt as the model gets it (an assistant message's images are notes in its text). */
const attachedPromptMessage = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  images: z.array(image).optional(),
});

export const attachedSchema = z.object({
  resources: z.array(attachedResource).optional(),
  prompt: z
    .object({
      serverId: z.string(),
      name: z.string(),
      arguments: z.record(z.string(), z.string()),
      messages: z.array(attachedPromptMessage),
    })
    .optional(),
});

export type Attached = z.output<typeof attachedSchema>;
export type AttachedResource = z.output<typeof attachedResource>;
export type AttachedPromptMessage = z.output<typeof attachedPromptMessage>;

export interface UserTurn {
  content: string;
  image?: ImagePart | undefined;
  attached?: Attached | undefined;
}

const userMessage = (content: string, images: ImagePart[]): ChatMessage => {
  const [first, ...rest] = images;
  if (!first) return { role: 'user', content };
  return rest.length === 0
    ? { role: 'user', content, image: first }
    : { role: 'user', content, image: first, images: rest };
};

export function userTurn(turn: UserTurn): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of turn.attached?.prompt?.messages ?? []) {
    out.push(
      m.role === 'assistant' ? { role: 'assistant', content: m.content } : userMessage(m.content, m.images ?? []),
    );
  }
  const resources = turn.attached?.resources ?? [];
  const texts = resources
    .filter((r) => r.text !== undefined)
    .map((r) => `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`);
  const content = [turn.content, ...texts].filter((t) => t !== '').join('\n\n');
  const images = [...(turn.image ? [turn.image] : []), ...resources.flatMap((r) => (r.image ? [r.image] : []))];
  if (out.length === 0 || content !== '' || images.length > 0) out.push(userMessage(content, images));
  return out;
}
