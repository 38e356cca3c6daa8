import { z } from 'zod';
import { positiveInt } from './numbers.ts';
import { a2aSchema, agUiSchema } from './faces-schema.ts';
export type { AgUiConfig } from './faces-schema.ts';
import { llmSchema } from './llm-schema.ts';
import { memorySchema } from './memory-schema.ts';
import { budgetsSchema } from './budgets-schema.ts';
import type { limitsSchema } from './limits-schema.ts';
import { serverSchema, type corsSchema } from './server-schema.ts';
import { storageSchema } from './storage-schema.ts';
import { schedulesSchema } from './schedules-schema.ts';
import { toolPolicySchema } from './tool-policy-schema.ts';
import { webhooksSchema } from './webhooks-schema.ts';
import {
  a2aAgentSchema,
  MEMORY_SERVER_ID,
  mcpServerConfigSchema,
  serverNameSchema,
  type httpServerSchema,
} from './tool-servers-schema.ts';
import { egressSchema } from './egress-schema.ts';

export { MEMORY_SERVER_ID } from './tool-servers-schema.ts';

export { PROVIDERS, llmSchema, type LlmApi, type LlmFallbackConfig, type Provider } from './llm-schema.ts';

export { AUTH_SCOPES, type AuthConfig } from './auth-schema.ts';
export { type MemoryConfig } from './memory-schema.ts';
export { type BudgetsConfig, type BudgetLimits } from './budgets-schema.ts';
export { scheduleSchema, scheduleIdSchema, type ScheduleConfig, type ScheduleInput } from './schedules-schema.ts';
export { runtimeEntryOf, type RuntimeCommand } from './runtime-schema.ts';
export { type DeliveriesLimits } from './deliveries-schema.ts';
export { type OAuthConfig } from './oauth-schema.ts';
export {
  DEFAULT_RETRY_SCHEDULE_MS,
  WEBHOOK_EVENTS,
  webhookIdSchema,
  webhookSchema,
  type WebhookConfig,
  type WebhookEventType,
  type WebhookInput,
} from './webhooks-schema.ts';
export {
  a2aAgentSchema,
  httpServerSchema,
  mcpServerConfigSchema,
  serverNameSchema,
  type A2aAgentConfig,
  type McpProtocolSetting,
} from './tool-servers-schema.ts';

/** The agent file, composed of the `*-schema.ts` blocks; agents/agent.schema.json and docs/configuration.md derive from it. */
export const agentConfigSchema = z
  .strictObject({
    version: z.string().default('1.0.0').describe("The agent's version: on its A2A card and in the exported config."),
    name: z.string().default('agentd').describe("The agent's name: on its A2A card and its MCP card resource."),
    description: z
      .string()
      .optional()
      .describe(
        'What the agent is for: on its cards, and the `instructions` its MCP face gives clients. Default: on the A2A card, `<name>: a conversational agent with tools`.',
      ),
    systemPrompt: z
      .string()
      .default('You are a helpful assistant.')
      .describe('Sent to the model as the `system` message of every request.'),
    llm: llmSchema.describe('The model: an OpenAI-compatible endpoint, its bounds, compaction and budgets.'),
    mcpServers: z
      .record(serverNameSchema, mcpServerConfigSchema)
      .default({})
      .describe(
        "Tool servers by name. A name is the server's id in the REST paths (1 to 64 letters, digits, `_`, `.` or `-`, not only dots). All connect in parallel at start; one that fails does not stop the service.",
      ),
    a2aAgents: z
      .record(serverNameSchema, a2aAgentSchema)
      .default({})
      .describe(
        'Remote A2A agents whose skills the model calls as tools, by name; names share one space with `mcpServers`.',
      ),
    toolResultMaxBytes: positiveInt(100 * 1024).describe(
      'Largest tool result handed to the model, in bytes; a longer one reaches it cut, with a last line `[... truncated N bytes by agentd]` (the REST endpoints return results uncut).',
    ),
    toolPolicy: toolPolicySchema
      .prefault({})
      .describe("Which tool calls run, wait for a person's approval, or are refused."),
    schedules: schedulesSchema.describe(
      'Turns the agent starts on its own, on a cron expression or an interval (docs/schedules.md); more are made at runtime with `POST /api/schedules`.',
    ),
    storage: storageSchema.prefault({ type: 'jsonl' }).describe('Where session logs are kept.'),
    memory: memorySchema,
    budgets: budgetsSchema,
    server: serverSchema
      .prefault({})
      .describe('The network service: address, CORS, limits, credentials, inspection, tracing and the MCP face.'),
    a2a: a2aSchema
      .prefault({})
      .describe('The agent served over A2A: its card at `/.well-known/agent-card.json` and `POST /a2a`.'),
    webhooks: webhooksSchema,
    egress: egressSchema,
    agUi: agUiSchema
      .prefault({})
      .describe(
        'The agent served over AG-UI (`POST /ag-ui`, streamed as SSE or protobuf; interrupts are its questions).',
      ),
  })
  .refine((c) => Object.keys(c.a2aAgents).every((name) => !(name in c.mcpServers)), {
    path: ['a2aAgents'],
    message: 'an A2A agent may not share its name with an entry of mcpServers (both are tool servers)',
  })
  // `client`: the server id of a client's tools (AG-UI), in their calls' events and frames.
  .refine((c) => !('client' in c.mcpServers || 'client' in c.a2aAgents), {
    path: ['mcpServers'],
    message: 'no tool server may be named "client" (the server id of the tools a client runs)',
  })
  // The memory tools' server id is `agentd:memory` (MEMORY_SERVER_ID), which no tool server can take; their id was
  // `memory` before: a rule still naming that server, with no tool server of that name, meant the memory tools.
  .refine(
    (c) =>
      !c.memory ||
      'memory' in c.mcpServers ||
      'memory' in c.a2aAgents ||
      !c.toolPolicy.rules.some((r) => r.server === 'memory'),
    {
      path: ['toolPolicy', 'rules'],
      message: `a rule names server "memory", and no tool server has that name: the built-in memory tools' server is "${MEMORY_SERVER_ID}"`,
    },
  )
  .refine(
    (c) =>
      (c.egress.allowPrivateNetworks === undefined || c.server.mcp.allowPrivateNetworks === undefined) &&
      (c.egress.allowedHosts === undefined || c.server.mcp.allowedHosts === undefined),
    {
      path: ['egress'],
      message: 'egress and its older names under server.mcp set the same key: keep egress only',
    },
  )
  .refine((c) => c.server.limits.store !== 'redis' || sharedRedisOf(c.storage) !== undefined, {
    path: ['server', 'limits', 'store'],
    message:
      'server.limits.store "redis" needs a Redis: storage.type "redis", or storage.redis beside "postgres" (its URL is the one the limits use)',
  });

/** The Redis the instances share, when there is one: the sessions' own, or the one beside PostgreSQL. */
export function sharedRedisOf(storage: z.output<typeof storageSchema>): { url: string; keyPrefix: string } | undefined {
  if (storage.type === 'redis') return storage;
  return storage.type === 'postgres' ? storage.redis : undefined;
}

/** Where the rate-limit windows live: `server.limits.store`, else Redis when the instances share one. */
export const limitsStoreOf = (config: AgentConfig): 'memory' | 'redis' =>
  config.server.limits.store ?? (sharedRedisOf(config.storage) ? 'redis' : 'memory');

export type AgentConfig = z.output<typeof agentConfigSchema>;
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
export type HttpServerConfig = z.output<typeof httpServerSchema>;
export type LlmConfig = z.output<typeof llmSchema>;
export type LimitsConfig = z.output<typeof limitsSchema>;
export type CorsConfig = z.output<typeof corsSchema>;
export type ToolPolicyConfig = z.output<typeof toolPolicySchema>;
