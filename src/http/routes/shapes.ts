/**
 * The REST routes' success bodies as zod schemas: what handlers are typed against (`defineRoute`), the OpenAPI
 * document publishes and the contract test checks. Only the HTTP envelopes are written here (records: records.ts).
 */
import { z } from 'zod';
import {
  agentHealth,
  appCallResult,
  approvalDecision,
  elicitationAction,
  compactionResult,
  frameEnvelope,
  pendingApproval,
  pendingClientToolCall,
  pendingElicitation,
  question,
  questionKind,
  serverRecord,
  sessionSummary,
  timestamp,
  toolExecutionResult,
  toolRecord,
  toolRun,
} from '../../conversation/records.ts';
import { promptRecord, promptResult, resourceContents, resourceList } from '../../conversation/mcp-records.ts';

/** A success body: `shape` and the answer's `timestamp` (every route's envelope; features' routes use it too). */
export const withTimestamp = <S extends z.ZodRawShape>(shape: S) => z.object({ ...shape, timestamp });

/** The health answer's agent status: the agent's own (`ready`, `degraded`), or `starting` before start-up is done. */
const agentStatus = z.enum(['starting', ...agentHealth.options.map((o) => o.shape.status.value)]);

const serverChange = (status: 'connected' | 'disconnected') =>
  withTimestamp({ status: z.literal(status), name: z.string(), server: serverRecord });

export const RESPONSES = {
  openApi: z.looseObject({
    openapi: z.literal('3.1.0'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  }),
  health: withTimestamp({
    status: z.literal('healthy'),
    version: z.string(),
    uptime: z.number().describe('seconds'),
    agent: z.object({
      status: agentStatus,
      connectedServers: z.number().int(),
      cause: z.string().optional().describe('Why the agent is degraded'),
      since: z.string().optional(),
    }),
    engine: z
      .enum(['uws', 'node'])
      .describe("The HTTP/WebSocket engine: uWebSockets.js, or Node's own sockets + ws where its addon cannot load"),
  }),
  live: withTimestamp({ status: z.literal('live') }),
  ready: withTimestamp({ status: z.literal('ready') }),
  messageSync: withTimestamp({
    success: z.literal(true),
    response: z.string(),
    tools: z
      .array(toolRun)
      .exactOptional()
      .describe(
        'The tools the turn called, in call order: only when the request asked for them (`include: ["tools"]`)',
      ),
  }),
  messageQueued: withTimestamp({
    status: z.literal('processing'),
    turnId: z.string().exactOptional().describe('The turn the caller named (`turnId` in the request), echoed'),
    duplicate: z
      .literal(true)
      .exactOptional()
      .describe('The session had this turn already (a retry with the same `turnId`): nothing new runs'),
  }),
  reset: withTimestamp({ status: z.literal('reset initiated') }),
  sessions: withTimestamp({
    sessions: z.array(sessionSummary).describe("A page of the caller's sessions, in key order"),
    nextCursor: z.string().optional().describe('Pass as `cursor` for the next page; absent on the last page'),
  }),
  history: withTimestamp({
    sessionId: z.string(),
    events: z.array(frameEnvelope),
    lastSeq: z.number().int(),
  }),
  sessionDeleted: withTimestamp({ sessionId: z.string(), deleted: z.boolean() }),
  sessionCancelled: withTimestamp({ sessionId: z.string(), cancelled: z.boolean() }),
  sessionCreated: withTimestamp({
    sessionId: z.string().describe('The new session'),
    lastSeq: z
      .number()
      .int()
      .describe('The seq of its last stored event (subscribe or read its history since 0 to replay it)'),
  }),
  compacted: withTimestamp(compactionResult.shape),
  approvals: withTimestamp({ sessionId: z.string(), approvals: z.array(pendingApproval) }),
  appCall: withTimestamp({
    sessionId: z.string(),
    callId: z.string().describe("The new call's id (its toolCall and toolResult frames carry it, and `appCallId`)"),
    result: appCallResult,
  }),
  approvalAnswered: withTimestamp({ sessionId: z.string(), callId: z.string(), decision: approvalDecision }),
  elicitations: withTimestamp({ sessionId: z.string(), elicitations: z.array(pendingElicitation) }),
  elicitationAnswered: withTimestamp({ sessionId: z.string(), id: z.string(), action: elicitationAction }),
  clientToolCalls: withTimestamp({ sessionId: z.string(), clientTools: z.array(pendingClientToolCall) }),
  questions: withTimestamp({ sessionId: z.string(), questions: z.array(question) }),
  questionAnswered: withTimestamp({ sessionId: z.string(), id: z.string(), kind: questionKind }),
  clientToolAnswered: withTimestamp({
    sessionId: z.string(),
    callId: z.string(),
    success: z.boolean().describe('false when the result carried an error'),
  }),
  servers: withTimestamp({ servers: z.array(serverRecord) }),
  serverConnected: serverChange('connected'),
  serverRemoved: serverChange('disconnected'),
  tools: withTimestamp({ tools: z.array(toolRecord) }),
  toolExecuted: toolExecutionResult,
  resources: resourceList.extend({ serverId: z.string(), timestamp }),
  resourceRead: resourceContents.extend({ timestamp }),
  subscription: withTimestamp({ serverId: z.string(), uri: z.string(), subscribed: z.boolean() }),
  prompts: withTimestamp({ serverId: z.string(), prompts: z.array(promptRecord) }),
  prompt: promptResult.extend({ timestamp }),
  roots: withTimestamp({ serverId: z.string(), roots: z.array(z.string()) }),
  signIn: withTimestamp({
    serverId: z.string(),
    signedIn: z.boolean().describe('The calling principal holds tokens for this server (its tool calls carry them)'),
    authorizationUrl: z
      .string()
      .optional()
      .describe("While the caller's sign-in is pending: the authorization server's page to open (for the caller only)"),
  }),
  /** The A2A agent card (src/a2a-face/card.ts): A2A's own shape, no envelope. */
};
