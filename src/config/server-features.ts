/** What agentd declares to and asks of each tool server; all optional, defaults applied in src/tools/mcp/server-features.ts. */
import { z } from 'zod';
import { optionalPositiveInt } from './numbers.ts';

/** The MCP log levels (RFC 5424), least severe first. */
export const MCP_LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];

const SAMPLING_POLICIES = ['deny', 'ask', 'allow'] as const;
export type SamplingPolicy = (typeof SAMPLING_POLICIES)[number];

export const serverFeatureKeys = {
  roots: z
    .array(z.string().min(1).max(2048))
    .max(100)
    .optional()
    .describe(
      'Root URIs offered to the server, e.g. `file:///srv/project`: agentd declares the `roots` capability (with `listChanged`) and answers `roots/list` with them; `PUT /api/mcp/servers/{id}/roots` replaces them. Absent: the capability is not declared.',
    ),
  progress: z
    .boolean()
    .optional()
    .describe(
      "Every tool call carries a progress token, and the server's progress notifications become `toolProgress` frames. Default: `true`.",
    ),
  resetTimeoutOnProgress: z
    .boolean()
    .optional()
    .describe("A progress notification restarts the call's `timeout`, up to `maxTotalTimeout`. Default: `false`."),
  maxTotalTimeout: optionalPositiveInt().describe(
    'The longest a call may run in all however often the server reports progress, in ms. Default: 10 × `timeout`.',
  ),
  logLevel: z
    .enum(MCP_LOG_LEVELS)
    .optional()
    .describe(
      "The level agentd asks the server to log at (`logging/setLevel`); its log lines go to agentd's log and, as `mcpServerLog` frames, to admin connections. Default: the server's own choice.",
    ),
  elicitation: z
    .union([z.boolean(), z.strictObject({ form: z.boolean().optional(), url: z.boolean().optional() })])
    .optional()
    .describe(
      'Whether the server may ask the user something during a tool call: `true` declares the form and URL modes, `false` none, `{ form?, url? }` the modes not set to `false`. Default: `true`.',
    ),
  listChanged: z
    .strictObject({
      tools: z.boolean().optional().describe("Re-read the server's tools when it says they changed. Default: `true`."),
      resources: z
        .boolean()
        .optional()
        .describe('Send an `mcpListChanged` frame when its resources change. Default: `true`.'),
      prompts: z
        .boolean()
        .optional()
        .describe('Send an `mcpListChanged` frame when its prompts change. Default: `true`.'),
    })
    .optional()
    .describe('Which `notifications/*/list_changed` agentd acts on. Default: all `true`.'),
  sampling: z
    .enum(SAMPLING_POLICIES)
    .optional()
    .describe(
      "Whether the server may ask the agent's model (`sampling/createMessage`): `deny` (the capability is not declared), `ask` (a person approves each request, like a tool call) or `allow`; a request is served only during one of the server's tool calls in a turn, and counts in that session's usage and budgets. Default: `deny`.",
    ),
  samplingMaxTokens: z
    .number()
    .int()
    .positive()
    .max(1_000_000)
    .optional()
    .describe(
      'The most tokens one sampling reply may take (`max_tokens`; never above `llm.maxOutputTokens`). Default: `1024`.',
    ),
  apps: z
    .union([z.boolean(), z.strictObject({ maxBytes: optionalPositiveInt() })])
    .optional()
    .describe(
      'MCP Apps (docs/tool-servers.md, "MCP Apps"): agentd declares the `io.modelcontextprotocol/ui` extension, and after each call of a tool that names a `ui://` resource it reads that resource and keeps it with the call in the session\'s log, up to `maxBytes` (default 1 MiB; a larger one is kept as a note). `false`: the extension is not declared and no resource is read. Default: `true`.',
    ),
};

/** The largest MCP App resource kept with a call when `apps.maxBytes` is not set. */
export const DEFAULT_APP_MAX_BYTES = 1024 * 1024;
