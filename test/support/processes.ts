/** The machine's running processes as Linux's /proc shows them, for tests about which processes live. */
import { readdirSync, readFileSync } from 'node:fs';

export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  cmd: string;
}

/** The running processes (zombies aside), from /proc. */
export function processes(): Proc[] {
  const found: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'latin1')
        .replace(/^.*\) /s, '')
        .split(' ');
      if (fields[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').trim();
      found.push({ pid: Number(entry), ppid: Number(fields[1]), pgid: Number(fields[2]), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The running processes started, directly or not, by process `pid` (children, theirs, …), not it. */
export function descendantsOf(pid: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  for (let parents = new Set([pid]); parents.size > 0;) {
    const next = all.filter((p) => parents.has(p.ppid));
    found.push(...next);
    parents = new Set(next.map((p) => p.pid));
  }
  return found;
}

/** Those of `list` still running (the same pid with the same command line). */
export function stillRunning(list: Proc[]): Proc[] {
  const now = processes();
  return list.filter((p) => now.some((q) => q.pid === p.pid && q.cmd === p.cmd));
}
