/** The machine's running processes as Linux's /proc shows them, for tests about which processes live. */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

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

/**
 * The TCP ports process `pid` listens on, from /proc: its sockets' inodes (/proc/<pid>/fd) matched against the
 * listening entries of /proc/<pid>/net/tcp and tcp6. For a server told to take a free port itself (port 0) that
 * logs only the 0 it was given: a port a test picked and freed first may be taken by another file meanwhile.
 */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (state === '0A' && inode && inodes.has(inode)) ports.add(parseInt(local!.split(':')[1]!, 16)); // 0A: LISTEN
    }
  }
  return [...ports];
}
