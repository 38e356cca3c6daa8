/** Field schemas that session events share, in every version (session-events.ts). */
import { z } from 'zod';

export const turnId = z.string();
export const image = z.object({ mimeType: z.string(), base64: z.string() });
/** Model usage of a step; cached and cache-write tokens are already counted in `promptTokens`. */
export const usage = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  cachedTokens: z.number().exactOptional(),
  cacheWriteTokens: z.number().exactOptional(),
});
/** The models (llm.fallback) that failed before the one named in `model` answered. */
export const fallbacks = z
  .array(
    z.object({
      model: z.string(),
      provider: z.string(),
      /** `details.reason` of its failure (e.g. `rate_limited`, `provider_error`, `connection`). */
      reason: z.string(),
      status: z.number().optional(),
      message: z.string(),
    }),
  )
  .optional();
export const toolCallRequest = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
/** What a person typed into a form (an accepted elicitation). */
export const elicitationContent = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]),
);
/** A task a tool server created for a call (MCP tasks): its id, and the MCP session it belongs to (HTTP servers). */
export const remoteTask = z.object({ taskId: z.string(), mcpSessionId: z.string().optional() });
export type RemoteTask = z.output<typeof remoteTask>;
/** The call a tool event is about. */
export const toolRef = { turnId, callId: z.string(), toolName: z.string(), serverId: z.string() };
/** A tool the client runs (AG-UI's `RunAgentInput.tools`), offered to the model for every step of its turn. */
export const clientTool = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});
export type ClientTool = z.output<typeof clientTool>;
