/**
 * How the facts of a session reach its output: those an opening records (decide.ts `decideOpen`), and
 * those its machines emit. Every emitted fact is stored in order; a dropped message is stored as a
 * cancelled `turnFailed` (so the next open does not run it again), its transient frame sent only if
 * that fails; a sender waiting for its turn's `userMessage` is answered once that is stored. `turnOpens` hears of a
 * turn's `userMessage` just before it is handed to the outbox.
 */
import type { SessionEmitted } from '../../../machines/session.machine.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';
import type { SendMeta } from '../../bus/index.ts';
import type { Logger } from '../../log/index.ts';
import { agentTurnFailed } from '../../conversation/turn-steps.ts';
import { droppedFrame, droppedMessage } from '../transient-frames.ts';
import type { Opening } from './decide.ts';
import { isOutboxClosed } from './outbox.ts';
import type { SessionOutput } from './output.ts';
import type { SessionDeps } from './types.ts';

/** The facts an opening records, each with its meta, logged as they go. */
export function openingFacts(
  opening: Opening,
  sessionId: string,
  log: Logger,
): { meta: SendMeta; event: SessionEvent }[] {
  const resumed = opening.resume?.resume;
  if (opening.resume && resumed?.awaiting.length)
    log.info(
      { sessionId, turnId: opening.resume.turnId, awaiting: resumed.awaiting.length },
      'resuming a turn that waits for approval',
    );
  else if (opening.resume)
    log.warn(
      {
        sessionId,
        turnId: opening.resume.turnId,
        rerun: resumed?.rerun?.map((c) => c.callId),
        interrupted: resumed?.interrupted.map((c) => c.callId),
      },
      'resuming a turn its process left running',
    );
  if (opening.requeue.length > 0)
    log.info({ sessionId, turns: opening.requeue.map((m) => m.turnId) }, 'resuming queued messages');
  return opening.record.map((event) => {
    if (event.type === 'turnFailed')
      log.warn({ sessionId, turnId: event.turnId, reason: event.details.reason }, 'ending a turn whose runner is gone');
    return {
      meta: { correlationId: 'turnId' in event && event.turnId !== undefined ? event.turnId : sessionId },
      event,
    };
  });
}

/** A sender whose message started a turn at once, waiting for that turn's `userMessage` to be stored. */
export interface Starting {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface EmittedDeps extends Pick<SessionDeps, 'sessionId' | 'log' | 'publish' | 'redact'> {
  output: SessionOutput;
  /** The durable seq frames carry when their fact could not be stored. */
  lastSeq: () => number;
  /** Stamps a model step with the session's totals once it is spent, and an answer with who gave it (answerers.ts). */
  counted: (event: SessionEvent) => SessionEvent;
  /** Senders waiting for their turn's `userMessage` (by turnId); answered and removed here. */
  starting: Map<string, Starting>;
  /** Told as a turn's `userMessage` is handed to the outbox (before it): the turn opens. */
  turnOpens: () => void;
}

/** The handler of everything the session actor emits (`actor.on('*', …)`). */
export function forwardEmitted(deps: EmittedDeps): (e: SessionEmitted) => void {
  const { sessionId, log, output, starting } = deps;
  return (e) => {
    const { key } = e;
    if (e.type === 'thinking') return output.thinking(key);
    if (e.type === 'chunk') return output.chunk(key, e.content);
    if (e.type === 'awaiting') return output.awaiting(key, e.questionIds);
    if (e.type === 'dropped') {
      return output.record(
        key,
        agentTurnFailed(key.turnId, droppedMessage(e.reason), e.reason, true),
        undefined,
        (err) =>
          isOutboxClosed(err) || deps.publish(droppedFrame(sessionId, key.turnId, deps.lastSeq(), e.reason), key),
      );
    }
    const event = deps.counted(e.event.type === 'turnFailed' ? deps.redact(e.event) : e.event);
    if (event.type === 'turnFailed' && !event.cancelled)
      log.warn({ sessionId, turnId: key.turnId, code: event.code, message: event.message }, 'turn failed');
    const sender = event.type === 'userMessage' ? starting.get(key.turnId) : undefined;
    if (sender) starting.delete(key.turnId);
    if (event.type === 'userMessage') deps.turnOpens();
    output.record(key, event, sender && (() => sender.resolve()), (err) => {
      sender?.reject(err);
      output.turnNotStored(key, err);
    });
  };
}
