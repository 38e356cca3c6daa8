import { z } from 'zod';
import { positiveInt } from './numbers.ts';
import { MEMORY_SERVER_ID, serverNameSchema } from './tool-servers-schema.ts';

const toolAction = z.enum(['allow', 'ask', 'deny']);

/** `toolPolicy`: which tool calls run, wait for a person's approval, or are refused (src/agent/questions/tool-policy.ts). */
export const toolPolicySchema = z.strictObject({
  default: toolAction
    .default('allow')
    .describe(
      "What happens to a call no rule matches (runtime-connected servers included): `allow` runs it, `ask` waits for a person's approval, `deny` never runs it.",
    ),
  rules: z
    .array(
      z.strictObject({
        server: serverNameSchema
          .or(z.literal(MEMORY_SERVER_ID))
          .optional()
          .describe(
            `A server's name, as in the REST paths, or \`${MEMORY_SERVER_ID}\` for the built-in memory tools; absent: any server.`,
          ),
        tool: z.string().min(1).optional().describe("A tool's own name on its server; absent: any tool."),
        action: toolAction.describe('`allow`, `ask` or `deny`, as for `default`.'),
      }),
    )
    .default([])
    .describe('The first rule whose `server` and `tool` match a call decides.'),
  timeoutMs: positiveInt(300_000).describe(
    "How long a call (or a sampling request under `sampling: ask`, or a tool server's question) waits for its answer before it is denied or declined, in ms.",
  ),
});
