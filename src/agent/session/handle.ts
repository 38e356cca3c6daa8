/**
 * A session's commands handled in one place (Emmett's `handleCommandWithDecider`): `handle(command)` runs
 * `decide(command, state, live())` and carries the decision out through `carryOut`, one row per decision type.
 *
 * Contracts:
 * - What `live()` says comes from the session machine alone: `running` is its `busy` state, `busy` is any state
 *   but `idle` (a turn or a compaction runs, or an ended turn's facts are still being written: `settling`).
 * - A refused command throws before anything changes; an accepted one marks the session active.
 * - `send` answers once the message is in the log (`duplicate` when it was before this command): a turn started now once its `userMessage` is stored, a queued
 *   one once its `messageQueued` is (a queued message that cannot be stored is withdrawn); `reset` once its event
 *   is stored (with its seq); `compact` with the stored `contextCompacted`, or `undefined` when nothing was compacted.
 */
import { EVENT_VERSION } from '../../conversation/session-events.ts';
import type { Question } from '../../conversation/questions.ts';
import { questionsOf } from '../../../machines/session.machine.ts';
import type { SessionStoredEvent } from '../frames.ts';
import { isOutboxClosed } from './outbox.ts';
import { storageFailure } from './storage-health.ts';
import { closedError, decide, type Decision, type Live, type SessionCommand } from './decide.ts';
import type { SessionWiring } from './wiring.ts';
import type { SessionDeps } from './types.ts';

/** A command as the session takes it: what `decide` reads, and the correlation id of the facts it records. */
export type HandledCommand = SessionCommand & { correlationId?: string };

/** What `send` answers: the message's turn, whether it waits behind another, and whether it was there before. */
export interface SendOutcome {
  turnId: string;
  queued: boolean;
  duplicate?: true;
}

/** What each command answers its caller. */
export interface Outcomes {
  send: Promise<SendOutcome>;
  appCall: { queued: boolean };
  answer: Question;
  cancel: boolean;
  reset: Promise<number>;
  compact: Promise<SessionStoredEvent | undefined>;
}

type CarryOut = {
  [T in Decision['type']]: (decision: Extract<Decision, { type: T }>, command: HandledCommand) => unknown;
};

export function createHandler(
  w: SessionWiring,
  deps: Pick<SessionDeps, 'clock' | 'validate' | 'maxResultBytes' | 'spend'>,
) {
  const { sessionId, actor, life } = w;
  const snapshot = () => actor.getSnapshot();
  const held = () => new Set(questionsOf(snapshot().children).map((q) => q.id));
  const live = (): Live => ({
    closedBy: life.closedBy,
    queue: snapshot().context.queue,
    running: snapshot().matches('busy'),
    busy: !snapshot().matches('idle'),
    held: held(),
    validate: deps.validate,
    maxResultBytes: deps.maxResultBytes,
    budgetAnsweredBy: deps.spend?.answeredBy ?? 'admin',
  });
  const notStored = (err: unknown) =>
    isOutboxClosed(err) ? closedError(sessionId, life.closedBy ?? 'closed') : storageFailure('message', err);
  const messageOf = (command: HandledCommand) => (command as Extract<SessionCommand, { type: 'send' }>).message;
  const correlationOf = (command: HandledCommand) => command.correlationId ?? sessionId;

  const carryOut: CarryOut = {
    duplicate: ({ turnId, queued }) => Promise.resolve({ turnId, queued, duplicate: true }),
    start(_, command) {
      const message = messageOf(command);
      const { turnId } = message;
      const started = new Promise<SendOutcome>((resolve, reject) =>
        w.starting.set(turnId, {
          resolve: () => resolve({ turnId, queued: false }),
          reject: (e) => reject(notStored(e)),
        }),
      );
      actor.send({ type: 'MESSAGE', message });
      return started;
    },
    queue({ event }, command) {
      const message = messageOf(command);
      actor.send({ type: 'MESSAGE', message });
      return new Promise((resolve, reject) =>
        w.output.record(
          { correlationId: message.correlationId },
          event,
          () => resolve({ turnId: message.turnId, queued: true }),
          (err) => {
            actor.send({ type: 'WITHDRAW', turnId: message.turnId });
            reject(notStored(err));
          },
        ),
      );
    },
    appCall({ message }) {
      const queued = !snapshot().matches('idle') || snapshot().context.queue.length > 0;
      actor.send({ type: 'MESSAGE', message });
      return { queued };
    },
    answer({ question, answer }, command) {
      const answering = command as Extract<SessionCommand, { type: 'answer' }>;
      w.answered.note(answering);
      actor.send({ type: 'ANSWER', id: answering.id, answer, by: answering.by });
      return question;
    },
    cancel: () => (actor.send({ type: 'CANCEL' }), true),
    ignore: () => false,
    reset(_, command) {
      actor.send({ type: 'DISCARD', reason: 'reset' });
      return new Promise<number>((resolve, reject) =>
        w.output.record(
          { correlationId: correlationOf(command) },
          { v: EVENT_VERSION, type: 'reset' },
          (s) => resolve(s.seq),
          (err) => reject(storageFailure('reset', err)),
        ),
      );
    },
    compact(_, command) {
      const correlationId = correlationOf(command);
      const done = w.compactions.wait(correlationId);
      actor.send({ type: 'COMPACT', correlationId });
      return done;
    },
  };

  return {
    live,
    held,
    /** Decides `command` against the session's state and carries the decision out (see the contracts). */
    handle: <C extends HandledCommand>(command: C): Outcomes[C['type']] => {
      const decision = decide(command, w.state, live());
      life.lastActive = deps.clock.now();
      const run = carryOut[decision.type] as (d: Decision, c: HandledCommand) => unknown;
      return run(decision, command) as Outcomes[C['type']]; // each command's decisions answer its own outcome
    },
  };
}
