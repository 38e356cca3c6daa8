/**
 * The process groups of this instance's stdio tool servers (each leads its own group), kept in a
 * file beside the session logs, so that no exit path leaves one behind.
 *
 * Contracts:
 * - `add`/`remove` keep the file current (written atomically: a temporary file renamed over it).
 * - `killAll()` sends SIGKILL to every group at once, synchronously: for exits that cannot wait
 *   (a second signal, process exit).
 * - `reapLeftovers(file)` runs at start: groups recorded by an agentd that is gone (kill -9, a crash)
 *   and still running the recorded command are killed; the file is then cleared.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Logger } from '../log/index.ts';

interface Entry {
  pid: number;
  command: string;
  /** The agentd process that started it. */
  owner: number;
}

export interface ChildRegistry {
  add(pid: number, command: string): void;
  remove(pid: number): void;
  killAll(): void;
}

/** Whether `pid` runs (a zombie, dead but not yet reaped, does not). */
const alive = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
};

const killGroup = (pid: number): void => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
};

function read(file: string): Entry[] {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { children?: Entry[] }).children ?? [];
  } catch {
    return [];
  }
}

/** `file` undefined (no data directory): groups are tracked in memory only. */
export function createChildRegistry(file: string | undefined, log: Logger): ChildRegistry {
  const live = new Map<number, Entry>();
  const save = () => {
    if (!file) return;
    try {
      const others = read(file).filter((e) => e.owner !== process.pid && alive(e.owner));
      writeFileSync(`${file}.tmp`, JSON.stringify({ children: [...others, ...live.values()] }));
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      log.warn({ err, file }, 'could not record tool-server processes');
    }
  };
  return {
    add(pid, command) {
      live.set(pid, { pid, command, owner: process.pid });
      save();
    },
    remove(pid) {
      if (live.delete(pid)) save();
    },
    killAll() {
      for (const pid of live.keys()) killGroup(pid);
    },
  };
}

const commandOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/** Kills the groups a dead agentd left in `file`; resolves with how many. */
export function reapLeftovers(file: string, log: Logger): number {
  let reaped = 0;
  const keep: Entry[] = [];
  for (const entry of read(file)) {
    if (alive(entry.owner) && entry.owner !== process.pid) {
      keep.push(entry); // another running agentd's
      continue;
    }
    if (alive(entry.pid) && commandOf(entry.pid).includes(entry.command)) {
      killGroup(entry.pid);
      reaped++;
      log.warn({ pid: entry.pid, command: entry.command, owner: entry.owner }, 'killed a tool server left behind by an agentd that is gone');
    }
  }
  try {
    writeFileSync(file, JSON.stringify({ children: keep }));
  } catch {
    // nothing recorded to clear
  }
  return reaped;
}
