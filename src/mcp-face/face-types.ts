import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { AgentCommands, AgentEvents, TurnWaiter } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { IdSource } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { QuestionKind } from '../conversation/records.ts';
import type { Logger } from '../log/index.ts';
import type { SessionKey } from '../session-id.ts';
import type { McpCommands, McpEvents } from '../tools/messages.ts';
import type { FaceKey } from './seal.ts';

type AgentCard = Pick<AgentConfig, 'name' | 'description' | 'version'> & { model: string };

type FaceBus = Pick<
  Bus<
    AgentCommands & Pick<McpCommands, 'mcp.modelTools' | 'mcp.callModelTool' | 'mcp.readApp'>,
    AgentEvents & Pick<McpEvents, 'mcp.toolsChanged'>
  >,
  'execute' | 'on'
>;

export interface ServerFaceDeps {
  bus: FaceBus;
  log: Logger;
  ids: IdSource;
  waiter: TurnWaiter;
  card: AgentCard;
  exposeTools: boolean;
  maxHops: number;
  /** Seals what the face hands to clients (requestState, session ids, answer ids); see seal.ts. */
  key: FaceKey;
  /** Declared as an experimental capability: agentd can tell it connected to itself (conversation/hops.ts). */
  serviceId?: string;
}

/** What a client is asked: one form elicitation (questions.ts); `_meta` names the task it is asked for (tasks.ts). */
export type FormQuestion = Pick<ElicitRequestFormParams, 'message' | 'requestedSchema'> & {
  _meta?: Record<string, unknown>;
};

/** A question sent; withdrawn when its call is answered elsewhere first. */
export interface AskedOutOfBand {
  withdraw(reason: string): Promise<void>;
}

/** A question, as an answer names it. */
export interface AnswerTo {
  sessionId: SessionKey;
  /** The question's id (a call's, for an approval). */
  callId: string;
  /** Absent: an approval (ids sealed before other kinds were asked). */
  kind?: QuestionKind;
}

/** What an HTTP caller of `/mcp` may answer: approvals (the `approve` scope), budget questions (`admin`). */
export interface Caller {
  mayApprove: boolean;
  admin: boolean;
}

export interface ServerOptions {
  /** It serves a whole connection (stdio), so a 2025-era client can be asked with `elicitation/create`. */
  persistent?: boolean;
  /** The caller may answer approvals (the `approve` scope); default: `persistent` (the operator's desktop client). */
  mayApprove?: boolean;
  /** The caller has the `admin` scope (may answer budget questions under `answeredBy: admin`); default: `persistent`. */
  admin?: boolean;
  /** A 2025-era HTTP client that declared the MCP Apps extension at `initialize` (its sealed `Mcp-Session-Id` says so). */
  apps?: boolean;
  /** A 2025-era HTTP client that declared form elicitation: asks on `relatedRequestId`'s stream (legacy-approvals). */
  outOfBand?: (
    question: FormQuestion,
    answerTo: AnswerTo,
    relatedRequestId: string | number,
  ) => Promise<AskedOutOfBand>;
}
