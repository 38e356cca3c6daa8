/** The agent's own MCP tools and resource: names, input schemas (the zod schemas that check the calls), results. */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { hopsOf, invalidHops } from '../conversation/hops.ts';
import { sessionIdSchema } from '../session-id.ts';

export const CARD_URI = 'agentd://agent/card';

function inputSchemaOf(schema: z.ZodType): Tool['inputSchema'] {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema) as Tool['inputSchema'] & { $schema?: string };
  return json;
}

export const chatInput = z.strictObject({
  message: z.string().min(1).describe('The message for the agent'),
  sessionId: sessionIdSchema.optional().describe('Conversation to continue (kept between calls)'),
});
export const resetInput = z.strictObject({ sessionId: sessionIdSchema.optional().describe('Conversation to clear') });

export const OWN_TOOLS: Tool[] = [
  {
    name: 'chat_with_agent',
    description: 'Send a message to the agent and get its reply. Without sessionId each call is a fresh conversation.',
    inputSchema: inputSchemaOf(chatInput),
    // A 2025-11-25 client may run it as a task (tasks.ts); the SDK leaves this out of a 2026-07-28 answer.
    execution: { taskSupport: 'optional' },
  },
  {
    name: 'reset_conversation',
    description: 'Clear the history of a conversation (default: the default conversation).',
    inputSchema: inputSchemaOf(resetInput),
  },
];

export const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: value }],
  ...(isError && { isError }),
});

/** The hop count of a request's `_meta`; a malformed one is invalid params, as on /a2a (src/conversation/hops.ts). */
export function hopsIn(meta: Record<string, unknown> | undefined): number {
  const hops = hopsOf(meta);
  if (hops === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, invalidHops('_meta'));
  return hops;
}

/** The arguments as `schema` reads them, else InvalidParams naming each problem. */
export function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const result = schema.safeParse(args ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments: ${problems}`);
}
