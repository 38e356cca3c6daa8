/** Field schemas that session events share, in every version (session-events.ts). */
import { z } from 'zod';

export const turnId = z.string();
export const image = z.object({ mimeType: z.string(), base64: z.string() });
/** Where a step's cost comes from: the provider's own figure, the bundled price table, or `llm.pricing`. */
export const COST_SOURCES = ['provider', 'table', 'config'] as const;
/** What one model step cost, in `currency` (ISO 4217). */
export const stepCost = z.object({
  amount: z.number().nonnegative(),
  currency: z.string(),
  source: z.enum(COST_SOURCES),
});
/** Costs summed per currency (a session's totals). */
export const costTotals = z.array(z.object({ amount: z.number().nonnegative(), currency: z.string() }));
/**
 * Model usage of a step, or a session's totals; cached and cache-write tokens are already counted in
 * `promptTokens`, reasoning tokens in `completionTokens`. A step has `cost` when its model is priced; totals
 * have `costs` (one per currency) once a priced step is among them. Both optional: logs without them read as before.
 */
export const usage = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  cachedTokens: z.number().exactOptional(),
  cacheWriteTokens: z.number().exactOptional(),
  reasoningTokens: z.number().exactOptional(),
  cost: stepCost.exactOptional(),
  costs: costTotals.exactOptional(),
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
