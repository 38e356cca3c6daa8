/**
 * The records the outside sees: the one source of their types, of the OpenAPI document and of its contract tests.
 * No defaults, no transforms (what a producer builds is what the wire carries); optional fields are absent, never `undefined`.
 */
import { z } from 'zod';
import { costTotals, elicitationContent } from './session-event-fields.ts';

export const timestamp = z.iso.datetime().describe('ISO 8601 UTC with milliseconds');

/** A tool server's connection status (the spec's; machines/mcp-server.machine.ts emits these). */
export const serverStatus = z.enum(['connecting', 'connected', 'error', 'disconnected']);
export type ServerStatus = z.output<typeof serverStatus>;

const serverType = z.enum(['stdio', 'http']);

const serverCapabilities = z.object({
  client: z
    .record(z.string(), z.unknown())
    .describe('What agentd declared to the server (roots, elicitation, sampling when on)'),
  server: z
    .record(z.string(), z.unknown())
    .describe('What the server declared (tools, resources, prompts, logging, with listChanged/subscribe)'),
  progress: z.boolean().describe('Whether agentd sends a progress token with each tool call (config `progress`)'),
  logLevel: z.string().exactOptional().describe('The log level agentd asked for (config `logLevel`)'),
});

/** The spec's MCP server record. */
export const serverRecord = z.object({
  id: z.string(),
  name: z.string(),
  status: serverStatus,
  type: serverType,
  description: z.string().exactOptional(),
  error: z.string().exactOptional().describe('Why, when status is error'),
  authorizationUrl: z
    .string()
    .exactOptional()
    .describe(
      "While the server's OAuth sign-in is pending (status error: it cannot connect without it; connected: a call asked for more scope): where an admin signs in (shown to admins only)",
    ),
  oauthPer: z
    .literal('principal')
    .exactOptional()
    .describe(
      'With oauth.per: principal: each principal signs in for itself (POST /api/mcp/servers/{serverId}/sign-in) and its tool calls carry its own tokens',
    ),
  instances: z
    .array(z.object({ instanceId: z.string(), status: serverStatus, error: z.string().exactOptional() }))
    .exactOptional()
    .describe("With instances sharing one Redis: this server's status on each live instance"),
  capabilities: serverCapabilities
    .exactOptional()
    .describe('While connected: the capabilities agentd declared to the server and those it declared back'),
  protocolVersion: z
    .string()
    .exactOptional()
    .describe(
      'While connected to a server that speaks the 2026-07-28 protocol only: that revision (absent for 2025-era servers)',
    ),
});
export type ServerRecord = z.output<typeof serverRecord>;

/** The spec's tool record (server-side name). `description` is always sent: empty when the tool gives none. */
export const toolRecord = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type ToolRecord = z.output<typeof toolRecord>;

/** The spec's tool execution result. */
export const toolExecutionResult = z.object({
  success: z.literal(true),
  data: z
    .record(z.string(), z.unknown())
    .describe('The MCP result: content, and structuredContent when the tool gives one'),
  execution: z.object({ toolName: z.string(), serverId: z.string(), duration: z.number().describe('milliseconds') }),
  timestamp,
});
export type ExecutionResult = z.output<typeof toolExecutionResult>;

/** What an MCP App's call of a tool answers (`agent.appToolCall`): the MCP CallToolResult the app is given. */
export const appCallResult = z.object({
  content: z.array(z.unknown()).describe("The result's content blocks; a denied or failed call's one text says why"),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional().describe('Set when the call failed, was denied, expired or did not run to its end'),
});
export type AppCallResult = z.output<typeof appCallResult>;

const usageRecord = z.object({
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  totalTokens: z.number().int(),
  cachedTokens: z
    .number()
    .int()
    .exactOptional()
    .describe("Prompt tokens read from the provider's prompt cache (part of promptTokens)"),
  cacheWriteTokens: z
    .number()
    .int()
    .exactOptional()
    .describe("Prompt tokens written to the provider's prompt cache (part of promptTokens)"),
  reasoningTokens: z.number().int().exactOptional().describe('Reasoning tokens (part of completionTokens)'),
  costs: costTotals
    .exactOptional()
    .describe(
      'What the priced steps cost, summed per currency (`[{ amount, currency }]`); absent when none was priced',
    ),
});

/** A session as listed; a session not in memory has its usage read off its latest event that carries the totals. */
export const sessionSummary = z.object({
  id: z.string(),
  owner: z.string().optional().describe('The principal that owns the session (absent: no principal, as without auth)'),
  lastSeq: z.number().int(),
  updatedAt: z.string(),
  busy: z.boolean(),
  queued: z.number().int(),
  usage: usageRecord
    .exactOptional()
    .describe(
      'Model tokens (and their cost) of every step of the session so far (summaries included); absent for a session whose log predates usage totals',
    ),
});

/** What a compaction asked for did: `compacted: false` when there was nothing to compact. */
export const compactionResult = z.object({
  sessionId: z.string(),
  compacted: z.boolean(),
  seq: z.number().int().exactOptional().describe('Seq of the stored contextCompacted event'),
  method: z.enum(['clearToolResults', 'summary']).exactOptional(),
  upToSeq: z.number().int().exactOptional(),
  tokensBefore: z.number().int().exactOptional(),
  tokensAfter: z.number().int().exactOptional(),
});
export type CompactionResult = z.output<typeof compactionResult>;
export type SessionSummary = z.output<typeof sessionSummary>;

/**
 * A tool call's approval, a tool server's question (form or URL) or sampling request, a client tool call's result, or
 * a model step past a spending limit (`budget`, answered as an approval).
 */
export const questionKind = z.enum(['approval', 'elicitation', 'sampling', 'clientTool', 'budget']);
export type QuestionKind = z.output<typeof questionKind>;

/** A question waiting for a person: the one shape every face maps; faces answer it by `id`. */
export const question = z.object({
  id: z
    .string()
    .describe(
      'What an answer names: the call id of a tool approval or a client tool call, the id of an elicitation or a sampling request',
    ),
  kind: questionKind,
  sessionId: z.string(),
  turnId: z.string(),
  callId: z
    .string()
    .describe(
      'The tool call it belongs to: the one waiting for approval or for the client, or the one whose server asks',
    ),
  serverId: z
    .string()
    .describe('The tool server of the call (approval) or the one that asks; `client` for a tool the client runs'),
  toolName: z
    .string()
    .exactOptional()
    .describe('approval: the tool to call; clientTool: the tool as the client named it'),
  args: z
    .unknown()
    .exactOptional()
    .describe(
      "approval, clientTool: the call's arguments; sampling: `{ systemPrompt?, messages, maxTokens }`; budget: `{ principal, budget, limit, used, estimate, currency, resetTime? }`",
    ),
  message: z.string().exactOptional().describe("elicitation: the server's question; budget: what would be passed"),
  mode: z.enum(['form', 'url']).exactOptional().describe('elicitation: a form to fill in or a URL to open'),
  requestedSchema: z
    .record(z.string(), z.unknown())
    .exactOptional()
    .describe('elicitation (form): the fields asked for'),
  url: z.string().exactOptional().describe('elicitation (url): what to open'),
  expiresAt: z.string().describe('When it is denied (or declined; a client tool call fails) unanswered'),
});
export type Question = z.output<typeof question>;

export const approvalDecision = z.enum(['approve', 'deny']);
export type ApprovalDecision = z.output<typeof approvalDecision>;
export const elicitationAction = z.enum(['accept', 'decline', 'cancel']);
export type ElicitationAction = z.output<typeof elicitationAction>;

/** The answers a question takes, one per family of kinds (questions.ts `QUESTION_KINDS`): what is stored and replayed. */
export const approvalReply = z.object({
  decision: approvalDecision,
  reason: z.string().exactOptional(),
  /** budget questions only: approve, and raise the budget's limit for its period to this amount. */
  raiseTo: z.number().positive().finite().exactOptional(),
});
export type ApprovalReply = z.output<typeof approvalReply>;
/** `content` only when a form was accepted (never in a frame). */
export const elicitationReply = z.object({ action: elicitationAction, content: elicitationContent.exactOptional() });
export type ElicitationReply = z.output<typeof elicitationReply>;
/** A client's result of a call of its tool: its text, and `error` when the call failed. */
export const clientToolReply = z.object({ content: z.string(), error: z.string().exactOptional() });
export type ClientToolReply = z.output<typeof clientToolReply>;
/** A person's answer (or the one a timeout, a call's end or a stop gives); its keys name its family. */
export const questionAnswer = z.union([approvalReply, elicitationReply, clientToolReply]);
export type QuestionAnswer = z.output<typeof questionAnswer>;

/** A tool call (or a sampling request, `toolName: "sampling/createMessage"`) waiting for a person's approval. */
export const pendingApproval = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  callId: z.string(),
  toolName: z.string(),
  serverId: z.string(),
  args: z.unknown(),
  expiresAt: z.string().describe('When the call is denied unanswered'),
});
export type PendingApproval = z.output<typeof pendingApproval>;

/** A tool server's question waiting for the user, as a listing shows it (its session is the route's). */
export const pendingElicitation = question
  .pick({ id: true, turnId: true, callId: true, serverId: true, requestedSchema: true, url: true, expiresAt: true })
  .extend({ message: question.shape.message.unwrap(), mode: question.shape.mode.unwrap() });
export type PendingElicitation = z.output<typeof pendingElicitation>;

/** A call of a tool the client runs, waiting for the client's result, as a listing shows it (its session is the route's). */
export const pendingClientToolCall = z.object({
  callId: z.string(),
  turnId: z.string(),
  toolName: z.string().describe("The tool as the client named it (an AG-UI run's `tools`)"),
  args: z.unknown(),
  expiresAt: z.string().describe('When the call fails unanswered'),
});
export type PendingClientToolCall = z.output<typeof pendingClientToolCall>;

/** The agent's health: `degraded` from a failed append until one succeeds, with the cause and when it began. */
export const agentHealth = z.discriminatedUnion('status', [
  z.object({ status: z.literal('ready') }),
  z.object({ status: z.literal('degraded'), cause: z.string(), since: z.string() }),
]);
export type AgentHealth = z.output<typeof agentHealth>;

/** A frame as the history lists it (src/agent/frames.ts); `data` typed loosely, as frame interfaces have no index signature. */
const frameData: z.ZodType<Record<string, unknown>, object> = z.record(z.string(), z.unknown());
export const frameEnvelope = z.object({ event: z.string(), data: frameData });

/** A tool a turn called, as `message-sync` lists it when asked (`include: ["tools"]`), in call order. */
export const toolRun = z.object({
  name: z.string().describe("The tool's name on its server"),
  server: z.string().describe("The tool server's id"),
  ok: z.boolean().describe('Whether the call succeeded (false when it failed, was denied or was not approved)'),
});
export type ToolRun = z.output<typeof toolRun>;
