/**
 * The schedule store port: the schedules made at runtime (and the pause state of the agent file's), and every fire.
 * Contract (test/unit/schedule-store-contract.ts; memory, jsonl and redis engines pass it):
 * - A schedule is kept under its key (`scheduleKey`: ids live in their owner's namespace); every `scheduleId` the
 *   port takes or gives (claims, runs, removal) is that key.
 * - `claim` records a fire (status `claimed`) before its message is sent, and answers true to exactly one caller per
 *   schedule and planned time, ever (on Redis: across instances); later calls answer false.
 * - `update` replaces a recorded fire; `runs` lists a schedule's fires newest planned time first.
 * - `lastPlanned` is the latest planned time recorded for a schedule; `unsent` the fires claimed but never sent.
 * - `create` keeps a new schedule unless one is kept under its key (`exists`) or, given a `cap`, its `quotaHolder`
 *   holds `cap` schedules already (`full`), both decided in the same atomic step as the write: of concurrent creates
 *   (on Redis: on every instance) at most `cap` of one holder's land. `saveSchedule` replaces one (a pause) unchecked.
 */
import { createHash } from 'node:crypto';
import type { ScheduleConfig } from '../config/index.ts';

/**
 * A schedule as kept: its config, whose it is (`''`: no principal's), where it came from, and `quotaHolder`: whose
 * caps it is under (server.limits.schedules; its sessions count toward that holder's `sessionsPerPrincipal`) — the
 * name of the principal that made it, or `ip:<address>` for an anonymous caller; absent for an admin's schedules and
 * the agent file's, which are not capped.
 */
export interface StoredSchedule extends ScheduleConfig {
  owner: string;
  source: 'config' | 'api';
  createdAt: string;
  quotaHolder?: string;
}

/**
 * The key a schedule is kept under: its id in its owner's namespace (`<owner>/<id>`; the bare id for the unnamed
 * namespace, as before ids were scoped). Ids never hold a `/`, so no two namespaces' keys meet.
 */
export const scheduleKey = (schedule: Pick<StoredSchedule, 'owner' | 'id'>): string =>
  schedule.owner === '' ? schedule.id : `${schedule.owner}/${schedule.id}`;

/** The turn id of `schedule`'s fire at `plannedAt`: the same on every start, so the session tells a resent fire (`duplicate`). */
export const fireTurnId = (scheduleId: string, plannedAt: number) =>
  `sched-${createHash('sha256').update(`${scheduleId}\u0000${plannedAt}`).digest('hex').slice(0, 24)}`;
/** Whether a turn id may be a fire's (`fireTurnId`'s shape): what is looked up for a turn's end. */
export const isFireTurnId = (turnId: string): boolean => /^sched-[0-9a-f]{24}$/.test(turnId);

/** `queued`: an `overlap: queue` tick waiting for its schedule's previous run to end (sent then, oldest first). */
export type FireStatus = 'claimed' | 'queued' | 'sent' | 'finished' | 'failed' | 'skipped';

export interface FireRecord {
  /** The schedule's key (`scheduleKey`). */
  scheduleId: string;
  status: FireStatus;
  /** The tick (ISO). */
  plannedAt: string;
  /** When the message was sent. */
  firedAt?: string;
  finishedAt?: string;
  /** The session's id (in the schedule's principal's namespace). */
  session?: string;
  turnId?: string;
  usage?: Record<string, unknown>;
  /** Why a fire failed or was skipped. */
  reason?: string;
}

/** What `ScheduleStore.create` did: kept it, or not (one is kept under its key; its holder is at the cap). */
export type CreateOutcome = 'created' | 'exists' | 'full';

export interface ScheduleStore {
  open(): Promise<void>;
  close(): Promise<void>;
  schedules(): Promise<StoredSchedule[]>;
  create(schedule: StoredSchedule, cap?: number): Promise<CreateOutcome>;
  saveSchedule(schedule: StoredSchedule): Promise<void>;
  removeSchedule(id: string): Promise<void>;
  claim(scheduleId: string, plannedAt: number): Promise<boolean>;
  update(fire: FireRecord): Promise<void>;
  runs(scheduleId: string, limit: number): Promise<FireRecord[]>;
  lastPlanned(scheduleId: string): Promise<number | undefined>;
  unsent(): Promise<FireRecord[]>;
}

/**
 * A fire's changes after its claim (the record store's, record-schedule-store.ts): `fireOfTurn` finds a fire by its
 * turn (`fireTurnId`, indexed from its claim on), `change` writes `next(fire)` conditioned on the version it read
 * (read again on a conflict; nothing when the fire is gone or `next` answers undefined) and answers what it wrote.
 */
export interface FireChanges {
  fireOfTurn(turnId: string): Promise<FireRecord | undefined>;
  change(
    fire: Pick<FireRecord, 'scheduleId' | 'plannedAt'>,
    next: (fire: FireRecord) => FireRecord | undefined,
  ): Promise<FireRecord | undefined>;
}
