/** What the agent's MCP face is built from, and how each of its servers serves. */
import type { AgentCommands, AgentEvents, TurnWaiter } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { IdSource } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { McpCommands } from '../tools/index.ts';
import type { AnswerTo, AskedOutOfBand } from './legacy-approvals.ts';
import type { FormQuestion } from './questions.ts';
import type { FaceKey } from './seal.ts';

export interface AgentCard {
  name: string;
  description?: string;
  version: string;
  model: string;
}

/** The bus as the agent's MCP face uses it: agent commands, the connected tools, and reply chunks. */
export type FaceBus = Pick<
  Bus<AgentCommands & Pick<McpCommands, 'mcp.modelTools' | 'mcp.callModelTool'>, AgentEvents>,
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
  /**
   * This service's id, declared as an experimental capability so that agentd, connecting to a tool
   * server, can tell it reached itself (src/tools/mcp/self-connection.ts).
   */
  serviceId?: string;
}

/**
 * How a server of the face serves. `persistent`: it serves a whole connection (stdio), so a 2025-era
 * client can be asked with `elicitation/create`. `mayApprove`: the caller may answer approvals (the
 * `approve` scope; default: `persistent`, the operator's own desktop client). `outOfBand`: a 2025-era
 * HTTP client that declared form elicitation (its session id says so): a question is sent on the
 * stream of the request `relatedRequestId` and answered by a later POST (legacy-approvals.ts).
 */
export interface ServerOptions {
  persistent?: boolean;
  mayApprove?: boolean;
  outOfBand?: (
    question: FormQuestion,
    answerTo: AnswerTo,
    relatedRequestId: string | number,
  ) => Promise<AskedOutOfBand>;
}
