/** The tool shapes a turn works with: tools as the model sees them and the outcomes of their calls. */
import type { ToolDefinition } from './model-messages.ts';

/** What the tool policy says of a tool: run it, ask a person first, or never run it. */
export type ToolAction = 'allow' | 'ask' | 'deny';

/** A tool as the model sees it: a name unique across servers, valid for the model. */
export interface ModelTool extends ToolDefinition {
  serverId: string;
  toolName: string;
  /** The tool policy's action for it (default allow). */
  action?: ToolAction;
  /** A tool the client runs (serverId {@link CLIENT_SERVER_ID}): its call waits for the client's result. */
  client?: true;
}

/** The `serverId` of a tool the client runs (an AG-UI run's `tools`), in its calls' events and frames. */
export const CLIENT_SERVER_ID = 'client';

/** Outcome of a tool call made on the model's behalf; failures are results, not throws. */
export interface ModelToolOutcome {
  success: boolean;
  /** Text for the model, already capped at toolResultMaxBytes with a visible marker. */
  text: string;
  /** Structured result for events (`toolResult.result`). */
  result: unknown;
  serverId: string;
  toolName: string;
  durationMs: number;
}
