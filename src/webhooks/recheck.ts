/**
 * A fact stored just before its instance died is announced anyway. A fact reaches the outbox after it was stored (its
 * frame on the bus, then the deliveries added): an instance killed in between would lose its deliveries. So while a
 * webhook exists each turn has a recheck in the outbox, a delivery of its own (`webhookId` `turn-recheck/`, its id
 * named by the session key and turn, its body `{ sessionKey, turnId }`): added when the turn's first frame (the user's message) is heard, due 30 s later.
 * Contracts:
 * - The announcement of the turn's end (`response`, `error`) puts the recheck delivered once the end's deliveries are
 *   kept: a turn that ends on a living instance costs two outbox writes and nothing more.
 * - Otherwise the recheck falls due on whichever instance's dispatcher (after a restart; on Redis, any instance): it
 *   reads the turn's stored steps and announces each again (one delivery per webhook and fact id, so nothing is sent
 *   twice), then ends when the turn has, else comes back on `RECHECK_SCHEDULE_MS` (given up after it: about 2 days).
 * - With no webhook, nothing is written.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { toFrame, type TurnStep } from '../agent/index.ts';
import type { Logger } from '../log/index.ts';
import type { AttemptOutcome } from './attempt.ts';
import type { LocalTarget } from './dispatcher.ts';
import type { Delivery, OutboxStore } from './outbox-store.ts';

/** The webhook id of every recheck (no webhook's id holds a `/`). */
export const RECHECK_ID = 'turn-recheck/';
/** When a turn still running is read again. */
const RECHECK_SCHEDULE_MS = [60_000, 300_000, 1_800_000, 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 24 * 3_600_000];
/** How long after the turn's first frame it is read again if no end was announced. */
const GRACE_MS = 30_000;

export interface RecheckDeps {
  outbox: OutboxStore;
  /** The turn's stored steps (the turn follower's `steps`). */
  steps: (sessionKey: string, turnId: string) => Promise<TurnStep[]>;
  /** Announces one stored frame as its bus event would (`agent.<event>`, its data, stored at `ts`). */
  announce: (name: string, payload: unknown, ts: number) => Promise<void>;
  log: Logger;
}

const turnSchema = z.object({ sessionKey: z.string(), turnId: z.string() });
const recheckId = (sessionKey: string, turnId: string) =>
  `chk_${createHash('sha256').update(`${sessionKey}\n${turnId}`).digest('hex').slice(0, 32)}`;

export function createRecheck(deps: RecheckDeps) {
  const { outbox } = deps;
  const delivery = (sessionKey: string, turnId: string, now: number): Delivery => ({
    ...{ id: recheckId(sessionKey, turnId), webhookId: RECHECK_ID, eventId: `${sessionKey}#${turnId}#recheck` },
    ...{ type: 'turn.completed', status: 'pending', attempts: 0, createdAt: now, nextAttemptAt: now + GRACE_MS },
    body: JSON.stringify({ sessionKey, turnId }),
  });
  const target: LocalTarget = {
    owns: (d) => d.webhookId === RECHECK_ID,
    retryScheduleMs: RECHECK_SCHEDULE_MS,
    timeoutMs: 60_000,
    async run(d): Promise<AttemptOutcome> {
      const { sessionKey, turnId } = turnSchema.parse(JSON.parse(d.body));
      const steps = await deps.steps(sessionKey, turnId);
      let ended = false;
      for (const step of steps) {
        const frame = step.kind === 'fact' ? toFrame(step.stored) : undefined;
        if (!frame) continue;
        await deps.announce(`agent.${frame.event}`, frame.data, step.ts);
        ended ||= frame.event === 'response' || frame.event === 'error';
      }
      return ended
        ? { delivered: true, statusCode: 200 }
        : { delivered: false, retry: true, error: 'the turn has not ended yet' };
    },
  };

  return {
    target,
    /** The turn's first frame (`userMessage`'s data) was heard at `now`: its recheck is kept (a failure logged). */
    started(frame: unknown, now: number): void {
      const { sessionId: sessionKey, turnId } = frame as { sessionId: string; turnId?: string };
      if (turnId === undefined) return;
      outbox
        .add(delivery(sessionKey, turnId, now))
        .catch((err: unknown) => deps.log.error({ err, sessionKey, turnId }, 'webhook outbox: no recheck kept'));
    },
    /** The turn's end was announced and its deliveries kept (`now`): its recheck is done. */
    async ended(sessionKey: string, turnId: string, now: number): Promise<void> {
      const d = delivery(sessionKey, turnId, now);
      await outbox.put({ ...d, status: 'delivered', attempts: 0, deliveredAt: now, nextAttemptAt: now });
    },
  };
}
