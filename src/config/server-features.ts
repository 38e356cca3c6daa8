/**
 * What agentd declares to and asks of each tool server (keys of `mcpServers.<name>`, beside its
 * transport keys). Every key is optional; the defaults are applied where they are used
 * (src/tools/server-features.ts), so a config written before these keys existed reads the same.
 */
import { z } from 'zod';

/** The MCP log levels (RFC 5424), least severe first. */
export const MCP_LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];

/** What a server's `sampling/createMessage` gets. */
export const SAMPLING_POLICIES = ['deny', 'ask', 'allow'] as const;
export type SamplingPolicy = (typeof SAMPLING_POLICIES)[number];

export const serverFeatureKeys = {
  /**
   * Roots offered to the server (`roots` capability): the folders or URIs it may work in, e.g.
   * `file:///srv/project`. Absent: the capability is not declared.
   */
  roots: z.array(z.string().min(1).max(2048)).max(100).optional().describe('Root URIs offered to the server (declares the roots capability, with listChanged)'),
  /** Every tool call carries a progress token and progress is relayed (default true). */
  progress: z.boolean().optional().describe('Send a progress token with every tool call and relay its progress as toolProgress frames (default true)'),
  /** A progress notification restarts the call's `timeout` (default false)... */
  resetTimeoutOnProgress: z.boolean().optional().describe('A progress notification restarts the call\'s timeout (default false), up to maxTotalTimeout'),
  /** ...up to this many milliseconds in all (default 10 × `timeout`). */
  maxTotalTimeout: z.number().int().positive().optional().describe('With resetTimeoutOnProgress: the longest a call may run in all, in ms (default 10 × timeout)'),
  /** The level agentd asks the server to log at (`logging/setLevel`); absent: the server's own choice. */
  logLevel: z.enum(MCP_LOG_LEVELS).optional().describe('The log level agentd asks the server for (logging/setLevel); absent: the server\'s own'),
  /**
   * Elicitation (the server asks the user something during a tool call): `true` (default) declares
   * both modes, `false` none, or per mode `{ form?, url? }` (each default true).
   */
  elicitation: z
    .union([z.boolean(), z.strictObject({ form: z.boolean().optional(), url: z.boolean().optional() })])
    .optional()
    .describe('Declare the elicitation capability: true (default: form and URL modes), false, or { form?, url? } (each default true)'),
  /** Which `notifications/*\/list_changed` agentd acts on (each default true). */
  listChanged: z
    .strictObject({ tools: z.boolean().optional(), resources: z.boolean().optional(), prompts: z.boolean().optional() })
    .optional()
    .describe('Which list_changed notifications agentd acts on (each default true)'),
  /** Whether the server may ask the agent's model (`sampling/createMessage`); default `deny` (src/tools/sampling.ts). */
  sampling: z.enum(SAMPLING_POLICIES).optional().describe('sampling/createMessage from this server: deny (default: the capability is not declared), ask (a person approves each request, like a tool call) or allow (answered by the agent\'s model during one of the server\'s tool calls)'),
  /** The most tokens one sampling reply may take (default 1024; never above llm.maxOutputTokens). */
  samplingMaxTokens: z.number().int().positive().max(1_000_000).optional().describe('The most tokens one sampling reply may take (default 1024, never above llm.maxOutputTokens)'),
};
