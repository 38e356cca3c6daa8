/**
 * The process groups of this instance's stdio tool servers (each leads its own group), kept in a
 * file beside the session logs, so that no exit path leaves one behind.
 *
 * Contracts:
 * - `add`/`answered`/`remove` keep the file current (written atomically: a temporary file renamed over it).
 *   An entry holds the leader's pid, command, start time (field 22 of `/proc/<pid>/stat`, clock ticks since
 *   boot) and the boot it ran in (`/proc/sys/kernel/random/boot_id`), the owning agentd's pid, and `seen`:
 *   the time (same clock) the server first answered, when it has.
 * - `killAll()` sends SIGKILL to every group at once, synchronously: for exits that cannot wait
 *   (a second signal, process exit).
 * - `reapLeftovers(file)` runs at start: what the group reaper (group-reaper.ts) could not end, or where it does
 *   not run. For each group recorded by an agentd that is gone (kill -9, a crash)
 *   in this boot (an entry from another boot is dropped: nothing of it runs):
 *   - leader running: killed when it is the recorded process (same start time, when recorded) still running
 *     the recorded command;
 *   - leader gone but the group still has members (a launcher's children, when the leader exited or the fallback
 *     parent-death signal of parent-death.ts killed only it): killed when some member started at or before `seen`.
 *     Why this rule: a pgid is not reused while any process is in the group, so the group is the recorded
 *     one unless it emptied and a new process with the same pid made a new group with it. That can only
 *     happen after the owner died (until then the entry proves the group alive), so every member of such a
 *     new group is that new leader or a descendant of it, all started after the owner died, hence after
 *     `seen` (the owner was alive to record it). A member started by `seen` therefore proves the group
 *     never emptied. Start times alone (members started after the leader) prove nothing: a reused group's
 *     members started after the leader too. The one gap is an older process deliberately joining a newer
 *     group with setpgid, which job-control shells do only for children they just forked. No `seen` (the
 *     server never answered) or no `/proc` (not Linux): a leaderless group is left alone, as before.
 *   The file is then cleared.
 */
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Logger } from '../../log/index.ts';

export interface Entry {
  pid: number;
  command: string;
  /** The agentd process that started it. */
  owner: number;
  /** The leader's start time, in clock ticks since boot. */
  start?: number;
  /** The boot it ran in. */
  boot?: string;
  /** When the server first answered, in clock ticks since boot. */
  seen?: number;
}

export interface ChildRegistry {
  add(pid: number, command: string): void;
  /** The server led by `pid` answered: its group was alive, holding the server, at this time. */
  answered(pid: number): void;
  remove(pid: number): void;
  killAll(): void;
}

/** What the registry reads of the system (injectable for tests). */
export interface Procs {
  /** State, process group and start time of `pid`; undefined when unknown (gone, no /proc). */
  stat(pid: number): { state: string; pgrp: number; start: number } | undefined;
  cmdline(pid: number): string;
  /** All pids listed in /proc ([] without it). */
  pids(): number[];
  bootId(): string | undefined;
  /** Now, in clock ticks since boot. */
  now(): number | undefined;
  /** Whether `pid` exists, for systems without /proc. */
  exists(pid: number): boolean;
  killGroup(pgid: number): void;
}

/** Linux reports start times in USER_HZ ticks, which is 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

export const systemProcs: Procs = {
  stat(pid) {
    const text = readText(`/proc/${pid}/stat`);
    if (text === undefined) return undefined;
    // pid (comm) state ppid pgrp … starttime: the fields after the last ')' start at field 3.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const state = fields[0] ?? '';
    const pgrp = Number(fields[2]);
    const start = Number(fields[19]);
    return Number.isInteger(pgrp) && Number.isInteger(start) ? { state, pgrp, start } : undefined;
  },
  cmdline: (pid) => (readText(`/proc/${pid}/cmdline`) ?? '').replaceAll('\0', ' '),
  pids() {
    try {
      return readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .map(Number);
    } catch {
      return [];
    }
  },
  bootId: () => readText('/proc/sys/kernel/random/boot_id')?.trim() || undefined,
  now() {
    const match = /^(\d+)(?:\.(\d+))?/.exec(readText('/proc/uptime') ?? '');
    if (!match) return undefined;
    return Number(match[1]) * TICKS_PER_SECOND + Number((match[2] ?? '').padEnd(2, '0').slice(0, 2));
  },
  exists(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  killGroup(pgid) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  },
};

/** Whether `pid` runs (a zombie, dead but not yet reaped, does not). */
const alive = (procs: Procs, pid: number): boolean => {
  const stat = procs.stat(pid);
  return stat ? stat.state !== 'Z' : procs.exists(pid);
};

function read(file: string): Entry[] {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { children?: Entry[] }).children ?? [];
  } catch {
    return [];
  }
}

/** `file` undefined (no data directory): groups are tracked in memory only. */
export function createChildRegistry(file: string | undefined, log: Logger, procs: Procs = systemProcs): ChildRegistry {
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
    add(pid, command) {
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
    answered(pid) {
      const entry = live.get(pid);
      const now = procs.now();
      if (!entry || entry.seen !== undefined || now === undefined) return;
      entry.seen = now;
      save();
    },
    remove(pid) {
      if (live.delete(pid)) save();
    },
    killAll() {
      for (const pid of live.keys()) procs.killGroup(pid);
    },
  };
}

/** The running members of `entry`'s group other than its leader, when one of them proves the group is still `entry`'s (see the contract). */
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
