/** Version 1 of session events: lines written before `v` existed, read only to be upcast (session-events.ts). */
import { z } from 'zod';
import { image, toolCallRequest, toolRef, turnId, usage } from './session-event-fields.ts';

export const v1Schema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('userMessage'), turnId, content: z.string(), image: image.optional() }),
  z.object({
    type: z.literal('assistantMessage'),
    turnId,
    content: z.string(),
    toolCalls: z.array(toolCallRequest).optional(),
    final: z.boolean(),
    model: z.string(),
    usage: usage.optional(),
  }),
  z.object({ type: z.literal('toolCall'), ...toolRef, args: z.unknown() }),
  z.object({
    type: z.literal('toolResult'),
    ...toolRef,
    success: z.boolean(),
    result: z.string(),
    durationMs: z.number(),
  }),
  z.object({ type: z.literal('reset') }),
  z.object({
    type: z.literal('turnFailed'),
    turnId,
    code: z.string(),
    message: z.string(),
    cancelled: z.boolean().optional(),
  }),
]);

export type V1Event = z.output<typeof v1Schema>;
