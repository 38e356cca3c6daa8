/**
 * The process groups of this instance's stdio servers, recorded in a file beside the session logs (replaced
 * atomically) so that no exit path leaves one behind. An entry: leader pid, command, start time and boot (from
 * /proc), the owning agentd's pid, and `seen` (when the server first answered).
 * - `killAll()` SIGKILLs every group at once, synchronously (for exits that cannot wait).
 * - `reapLeftovers(file)`, at start, for each entry of a gone agentd in this boot (other boots' are dropped): a running
 *   leader is killed when it is the recorded process (same start time) with the recorded command; a leaderless group
 *   when a member started at or before `seen` (why that proves it: docs/internals/tools.md). Only live agentds'
 *   entries stay in the file.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Logger } from '../../log/index.ts';
import { alive, systemProcs, type Procs } from '../../procs.ts';

export interface Entry {
  pid: number;
  command: string;
  owner: number;
  /** The leader's start time, in clock ticks since boot. */
  start?: number;
  boot?: string;
  /** When the server first answered, in clock ticks since boot. */
  seen?: number;
}

function read(file: string): Entry[] {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { children?: Entry[] }).children ?? [];
  } catch {
    return [];
  }
}

export type ChildRegistry = ReturnType<typeof createChildRegistry>;

/** `file` undefined (no data directory): groups are tracked in memory only. */
export function createChildRegistry(file: string | undefined, log: Logger, procs: Procs = systemProcs) {
  const live = new Map<number, Entry>();
  const save = () => {
    if (!file) return;
    try {
      const others = read(file).filter((e) => e.owner !== process.pid && alive(procs, e.owner));
      writeFileSync(`${file}.tmp`, JSON.stringify({ children: [...others, ...live.values()] }));
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      log.warn({ err, file }, 'could not record tool-server processes');
    }
  };
  return {
    add(pid: number, command: string): void {
      const start = procs.stat(pid)?.start;
      const boot = procs.bootId();
      live.set(pid, {
        pid,
        command,
        owner: process.pid,
        ...(start !== undefined && { start }),
        ...(boot !== undefined && { boot }),
      });
      save();
    },
    /** The server led by `pid` answered: its group was alive, holding the server, at this time. */
    answered(pid: number): void {
      const entry = live.get(pid);
      const now = procs.now();
      if (!entry || entry.seen !== undefined || now === undefined) return;
      entry.seen = now;
      save();
    },
    remove(pid: number): void {
      if (live.delete(pid)) save();
    },
    killAll(): void {
      for (const pid of live.keys()) procs.killGroup(pid);
    },
  };
}

/** The running members of `entry`'s group besides its leader, when one proves the group is still `entry`'s. */
function provenMembers(entry: Entry, procs: Procs): number[] | undefined {
  if (entry.seen === undefined) return undefined;
  const members: { pid: number; start: number }[] = [];
  for (const pid of procs.pids()) {
    const stat = procs.stat(pid);
    if (stat && stat.pgrp === entry.pid && stat.state !== 'Z' && pid !== entry.pid)
      members.push({ pid, start: stat.start });
  }
  const seen = entry.seen;
  return members.some((m) => m.start <= seen) ? members.map((m) => m.pid) : undefined;
}

/** Kills the groups a dead agentd left in `file`; returns how many. */
export function reapLeftovers(file: string, log: Logger, procs: Procs = systemProcs): number {
  let reaped = 0;
  const keep: Entry[] = [];
  const boot = procs.bootId();
  for (const entry of read(file)) {
    if (alive(procs, entry.owner) && entry.owner !== process.pid) {
      keep.push(entry); // another running agentd's
      continue;
    }
    if (entry.boot !== undefined && boot !== undefined && entry.boot !== boot) continue; // nothing of another boot runs
    const leader = procs.stat(entry.pid);
    const fields = { pid: entry.pid, command: entry.command, owner: entry.owner };
    if (leader ? leader.state !== 'Z' : procs.exists(entry.pid)) {
      const same = entry.start === undefined || leader?.start === entry.start;
      if (same && procs.cmdline(entry.pid).includes(entry.command)) {
        procs.killGroup(entry.pid);
        reaped++;
        log.warn(fields, 'killed a tool server left behind by an agentd that is gone');
      }
      continue;
    }
    const members = boot !== undefined && entry.boot === boot ? provenMembers(entry, procs) : undefined;
    if (members) {
      procs.killGroup(entry.pid);
      reaped++;
      log.warn(
        { ...fields, members },
        "killed what a gone tool server's launcher left in its process group, left behind by an agentd that is gone",
      );
    }
  }
  try {
    writeFileSync(file, JSON.stringify({ children: keep }));
  } catch {
    // nothing recorded to clear
  }
  return reaped;
}
