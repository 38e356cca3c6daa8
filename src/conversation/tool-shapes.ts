/** The tool shapes a turn works with: tools as the model sees them and the outcomes of their calls. */
import type { ToolDefinition } from './model-messages.ts';
import type { ToolApp } from './tool-app.ts';

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
  /**
   * A second call does no harm: the tool is annotated `readOnlyHint` or `idempotentHint`, or its server's config says
   * `idempotent: true`. A turn resumed after its process stopped runs such a call again instead of failing it.
   */
  rerunSafe?: true;
  /**
   * Its MCP App metadata: the tool's `_meta.ui` as its server declared it (`resourceUri` filled in from the deprecated
   * `_meta["ui/resourceUri"]`), for faces that pass it on (/mcp). Never sent to the model.
   */
  ui?: Record<string, unknown>;
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
  /** The MCP App its tool names, read after the call, or why it could not be kept (tool-app.ts). */
  app?: ToolApp;
}

const marker = (bytes: number) => `\n[... truncated ${bytes} bytes by agentd]`;

/**
 * The one bound of every tool result the model reads (server tools, A2A agents, client tools, what a server attaches):
 * at most `maxBytes` UTF-8 bytes (`toolResultMaxBytes`), never splitting a character; a cut text ends with
 * `\n[... truncated N bytes by agentd]` (the marker counts towards the cap).
 */
export function capText(text: string, maxBytes: number): { text: string; truncatedBytes: number } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, truncatedBytes: 0 };
  // The marker's own length depends on N; sizing it for the whole text is an upper bound.
  let keep = Math.max(0, maxBytes - Buffer.byteLength(marker(buf.length)));
  while (keep > 0 && (buf[keep]! & 0xc0) === 0x80) keep--;
  const removed = buf.length - keep;
  return { text: buf.subarray(0, keep).toString('utf8') + marker(removed), truncatedBytes: removed };
}
