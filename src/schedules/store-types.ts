/**
 * The schedule store port: the schedules made at runtime (and the pause state of the agent file's), and every fire.
 * Contract (test/unit/schedule-store-contract.ts; memory, jsonl and redis engines pass it):
 * - A schedule is kept under its key (`scheduleKey`: ids live in their owner's namespace); every `scheduleId` the
 *   port takes or gives (claims, runs, removal) is that key.
 * - `claim` records a fire (status `claimed`) before its message is sent, and answers true to exactly one caller per
 *   schedule and planned time, ever (on Redis: across instances); later calls answer false.
 * - `update` replaces a recorded fire; `runs` lists a schedule's fires newest planned time first.
 * - `lastPlanned` is the latest planned time recorded for a schedule; `unsent` the fires claimed but never sent.
 */
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

export interface ScheduleStore {
  open(): Promise<void>;
  close(): Promise<void>;
  schedules(): Promise<StoredSchedule[]>;
  saveSchedule(schedule: StoredSchedule): Promise<void>;
  removeSchedule(id: string): Promise<void>;
  claim(scheduleId: string, plannedAt: number): Promise<boolean>;
  update(fire: FireRecord): Promise<void>;
  runs(scheduleId: string, limit: number): Promise<FireRecord[]>;
  lastPlanned(scheduleId: string): Promise<number | undefined>;
  unsent(): Promise<FireRecord[]>;
}
