/**
 * The resources and prompt a message names (REST and the `message` frame), resolved through `mcp.attach`
 * before it is sent, so the stored `userMessage` holds exactly what the model is given.
 */
import { z } from 'zod';
import type { Attached } from '../conversation/attachments.ts';
import type { FrontEndBus } from './front-bus.ts';

const serverId = z.string().min(1).max(64);

export const attachFields = {
  resources: z
    .array(z.object({ serverId, uri: z.string().min(1).max(8192) }))
    .max(20)
    .optional()
    .describe(
      'Resources whose contents the model gets with the message (text inline, images as image parts, capped like tool results)',
    ),
  prompt: z
    .object({ serverId, name: z.string().min(1).max(200), arguments: z.record(z.string(), z.unknown()).optional() })
    .optional()
    .describe(
      "A prompt whose messages are sent as the user's turn (`message` is then empty, or extra text after them)",
    ),
};

/** The message's attachments read from their servers; `undefined` when it names none. */
export async function resolveAttachments(
  fields: z.output<z.ZodObject<typeof attachFields>>,
  bus: Pick<FrontEndBus, 'execute'>,
): Promise<Attached | undefined> {
  const resources = fields.resources ?? [];
  if (resources.length === 0 && !fields.prompt) return undefined;
  const { prompt } = fields;
  return await bus.execute('mcp.attach', {
    ...(resources.length > 0 && { resources }),
    ...(prompt && {
      prompt: {
        serverId: prompt.serverId,
        name: prompt.name,
        ...(prompt.arguments && { arguments: prompt.arguments }),
      },
    }),
  });
}
