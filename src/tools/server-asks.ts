/**
 * What a tool server asks during one of its calls (elicitation, sampling) and who answers, and the remote task a call
 * runs as (mcp/task-call.ts): the contract between the MCP client (mcp/elicitation.ts, mcp/sampling.ts) and the
 * agent's session. It imports neither side.
 */
import type { ElicitationContent, ElicitationReply } from '../conversation/questions.ts';
import type { RemoteTask } from '../conversation/session-event-fields.ts';

export type { ElicitationContent, RemoteTask };

/** What a server asks: a form (a flat JSON schema of primitive properties) or a URL to open. */
export type ElicitationAsk =
  | { serverId: string; message: string; mode: 'form'; requestedSchema: Record<string, unknown> }
  | { serverId: string; message: string; mode: 'url'; url: string; elicitationId: string };

/** Asks the person; the answer is the reply of an elicitation question (conversation/questions.ts). */
export type Elicitor = (
  ask: ElicitationAsk,
  options: { deadline: number; signal: AbortSignal },
) => Promise<ElicitationReply>;

/** Who answers the questions asked during one call: a session (`sessionId`: its key) and its elicitor. */
export interface ElicitTarget {
  sessionId: string;
  elicit: Elicitor;
}

/** A sampling request as the agent's model gets it. */
export interface SamplingRequest {
  serverId: string;
  systemPrompt?: string;
  messages: { role: 'user' | 'assistant'; content: string }[];
  maxTokens: number;
  /** `ask`: a person approves the request before the model sees it. */
  needsApproval: boolean;
}

export interface SamplingOptions {
  /** When the call's own timeout ends it (epoch ms). */
  deadline: number;
  /** Aborts when the server cancels its request or the call ends. */
  signal: AbortSignal;
}

/** The request was refused on the host's side (denied by a person, over a token budget); `message` says why. */
export class SamplingRefused extends Error {}

export interface SamplingReply {
  text: string;
  model: string;
  /** `endTurn`, `maxTokens`, or the model's own finish reason. */
  stopReason: string;
}

/** Serves a server's sampling requests during the tool call it was given to. */
export type Sampler = (request: SamplingRequest, options: SamplingOptions) => Promise<SamplingReply>;

/** Who answers what a server asks during one tool call (either protocol era; absent: it is refused). */
export interface ServerAsks {
  elicit?: ElicitTarget | undefined;
  sampler?: Sampler | undefined;
}

/** A call run as a remote task: the task's durable name is told once created, and given back to go on with it. */
export interface TaskHooks {
  /** Called once the server created the task, before it is polled (the session records it). */
  created?: ((task: RemoteTask) => void) | undefined;
  /** A task created earlier (recorded before a restart): poll it for its result instead of calling the tool. */
  resume?: RemoteTask | undefined;
}
