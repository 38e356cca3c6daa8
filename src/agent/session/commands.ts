/**
 * Which of the agent's commands are session-scoped: they act on a session's live state (its actor,
 * queue, questions), so they must run where the session is held — with a cluster, at the holder of
 * its lease (src/cluster routes them; src/app.ts passes this list in).
 *
 * Contracts:
 * - Every `AgentCommands` entry whose payload has `sessionId` is in `SESSION_COMMANDS` or in
 *   `NOT_SESSION_SCOPED` (checked at compile time below), and only such entries are.
 * - `TAKE_OVER_COMMAND` opens a session and does nothing else (`agent.openSession`): running it where
 *   a session must live takes the session over.
 */
import type { AgentCommands } from '../messages.ts';

/** The commands whose payload names a session. */
type NamesASession = {
  [K in keyof AgentCommands]: AgentCommands[K]['payload'] extends { sessionId: string } ? K : never;
}[keyof AgentCommands];

export const SESSION_COMMANDS = [
  'agent.sendMessage',
  'agent.reset',
  'agent.cancel',
  'agent.compact',
  'agent.openSession',
  'agent.questions',
  'agent.answer',
  'agent.deleteSession',
  'agent.queueAppCall',
] as const satisfies readonly NamesASession[];

/**
 * Commands that name a session but run anywhere: they read its stored log only (a fork writes a
 * new session, unknown to every instance, through the shared store: session-transfer.ts).
 */
export const NOT_SESSION_SCOPED = [
  'agent.history',
  'agent.toolApp',
  'agent.appToolCall',
  'agent.thread',
  'agent.sessionExists',
  'agent.exportSession',
  'agent.forkSession',
] as const satisfies readonly NamesASession[];

export type SessionCommand = (typeof SESSION_COMMANDS)[number];

export const TAKE_OVER_COMMAND = 'agent.openSession' satisfies SessionCommand;

/** A compile error here names a command with a `sessionId` that neither list classifies. */
type Unclassified = Exclude<NamesASession, SessionCommand | (typeof NOT_SESSION_SCOPED)[number]>;
export type EverySessionCommandClassified = [Unclassified] extends [never] ? true : { unclassified: Unclassified };
true satisfies EverySessionCommandClassified;
