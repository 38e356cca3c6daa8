/**
 * The system's processes as Linux's /proc shows them (state, group, start time, the boot), with `kill(pid, 0)` where
 * there is no /proc: what tells a process that runs from one that is gone or a pid reused since (the tool servers'
 * registry, the group reaper, the storage lock).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** What agentd reads of the system's processes (injectable for tests). */
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
export const alive = (procs: Procs, pid: number): boolean => {
  const stat = procs.stat(pid);
  return stat ? stat.state !== 'Z' : procs.exists(pid);
};
