/**
 * How the agent reaches memory per principal (issue 62) when `memory:` is on: a port the agent service is given, as it
 * is given spend's (SpendPort), built by the memory feature (src/memory/feature); the agent imports nothing of
 * src/memory.
 *
 * Contracts:
 * - `tools` are the model's memory tools as offered, beside the servers' (tool-port.ts: a server's tool of the same
 *   name is left out); the tool policy and approvals treat them like any tool.
 * - `call` runs one for the principal `owner` names (a session key's owner; undefined: the unnamed namespace), never
 *   another's, and never rejects: a failure is `success: false` with a text the model reads. The caller caps the text
 *   as it caps any tool's.
 * - `workingMemory(owner)` is the section that ends `owner`'s next turn's system prompt ('' when there is none); it
 *   never rejects.
 */
import type { ModelTool } from '../conversation/tool-shapes.ts';

/** Where a memory tool's call was made (kept on what it writes). */
export interface MemoryCallContext {
  /** The calling session's owner (its key's; undefined: the unnamed namespace). */
  owner: string | undefined;
  /** The session's id as its caller named it. */
  sessionId: string;
  turnId: string;
  callId: string;
  /**
   * A tool's output was in the model's context when it made this call: of any turn, until compaction left it out
   * (session/history.ts `holdsToolOutput`), but the answers of `ownWords`.
   */
  afterToolOutput: boolean;
}

export interface MemoryPort {
  readonly tools: readonly ModelTool[];
  /** The memory tools whose answers are agentd's own words (a save's "Saved as m1."): not a tool's output. */
  readonly ownWords: ReadonlySet<string>;
  call(
    name: string,
    args: unknown,
    context: MemoryCallContext,
  ): Promise<{ success: boolean; text: string; result: unknown }>;
  workingMemory(owner: string | undefined): Promise<string>;
}
