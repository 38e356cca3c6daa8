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

type Deps = Pick<SessionDeps, 'clock' | 'validate' | 'maxResultBytes' | 'spend'>;

type CarryOut = {
  [T in Decision['type']]: (
    h: SessionHandler,
    decision: Extract<Decision, { type: T }>,
    command: HandledCommand,
  ) => unknown;
};

const messageOf = (command: HandledCommand) => (command as Extract<SessionCommand, { type: 'send' }>).message;

/** One row per decision type, shared by every session (each row is given the session's handler). */
const carryOut: CarryOut = {
  duplicate: (_, { turnId, queued }) => Promise.resolve({ turnId, queued, duplicate: true }),
  start(h, _, command) {
    const message = messageOf(command);
    const { turnId } = message;
    const started = new Promise<SendOutcome>((resolve, reject) =>
      h.w.starting.set(turnId, {
        resolve: () => resolve({ turnId, queued: false }),
        reject: (e) => reject(h.notStored(e)),
      }),
    );
    h.w.actor.send({ type: 'MESSAGE', message });
    return started;
  },
  queue(h, { event }, command) {
    const message = messageOf(command);
    h.w.actor.send({ type: 'MESSAGE', message });
    return new Promise((resolve, reject) =>
      h.w.output.record(
        { correlationId: message.correlationId },
        event,
        () => resolve({ turnId: message.turnId, queued: true }),
        (err) => {
          h.w.actor.send({ type: 'WITHDRAW', turnId: message.turnId });
          reject(h.notStored(err));
        },
      ),
    );
  },
  appCall(h, { message }) {
    const snapshot = h.w.actor.getSnapshot();
    const queued = !snapshot.matches('idle') || snapshot.context.queue.length > 0;
    h.w.actor.send({ type: 'MESSAGE', message });
    return { queued };
  },
  answer(h, { question, answer }, command) {
    const answering = command as Extract<SessionCommand, { type: 'answer' }>;
    h.w.answered.note(answering);
    h.w.actor.send({ type: 'ANSWER', id: answering.id, answer, by: answering.by });
    return question;
  },
  cancel: (h) => (h.w.actor.send({ type: 'CANCEL' }), true),
  ignore: () => false,
  reset(h, _, command) {
    h.w.actor.send({ type: 'DISCARD', reason: 'reset' });
    return new Promise<number>((resolve, reject) =>
      h.w.output.record(
        { correlationId: h.correlationOf(command) },
        { v: EVENT_VERSION, type: 'reset' },
        (s) => resolve(s.seq),
        (err) => reject(storageFailure('reset', err)),
      ),
    );
  },
  compact(h, _, command) {
    const correlationId = h.correlationOf(command);
    const done = h.w.compactions.wait(correlationId);
    h.w.actor.send({ type: 'COMPACT', correlationId });
    return done;
  },
};

export const createHandler = (w: SessionWiring, deps: Deps): SessionHandler => new SessionHandler(w, deps);

/** One per session; its methods are on the prototype (a session holds no closures for them). */
export class SessionHandler {
  readonly w: SessionWiring;
  private readonly deps: Deps;

  constructor(w: SessionWiring, deps: Deps) {
    this.w = w;
    this.deps = deps;
  }

  /** The ids of the questions the running turn holds. */
  held(): Set<string> {
    return new Set(questionsOf(this.w.actor.getSnapshot().children).map((q) => q.id));
  }

  live(): Live {
    const snapshot = this.w.actor.getSnapshot();
    return {
      closedBy: this.w.life.closedBy,
      queue: snapshot.context.queue,
      running: snapshot.matches('busy'),
      busy: !snapshot.matches('idle'),
      held: this.held(),
      validate: this.deps.validate,
      maxResultBytes: this.deps.maxResultBytes,
      budgetAnsweredBy: this.deps.spend?.answeredBy ?? 'admin',
    };
  }

  /** A message's refusal when its fact could not be stored (or the session closed first). */
  notStored(err: unknown): Error {
    return isOutboxClosed(err)
      ? closedError(this.w.sessionId, this.w.life.closedBy ?? 'closed')
      : storageFailure('message', err);
  }

  correlationOf(command: HandledCommand): string {
    return command.correlationId ?? this.w.sessionId;
  }

  /** Decides `command` against the session's state and carries the decision out (see the contracts). */
  handle<C extends HandledCommand>(command: C): Outcomes[C['type']] {
    const decision = decide(command, this.w.state, this.live());
    this.w.life.lastActive = this.deps.clock.now();
    const run = carryOut[decision.type] as (h: SessionHandler, d: Decision, c: HandledCommand) => unknown;
    return run(this, decision, command) as Outcomes[C['type']]; // each command's decisions answer its own outcome
  }
}
