/**
 * Which processes a test run started, told apart from everything else on the machine (Linux /proc).
 *
 * A process is the run's own when it started at or after the run, and
 *   1. its environment holds the run's mark `AGENTD_TEST_RUN=<uuid of this run>`, or
 *   2. it is the run's root (the vitest process), or
 *   3. its parent, or the leader of its process group or of its session, was recorded as the run's own.
 * Nothing else counts: not the folder it runs in, not the files its command line names, not a mark
 * of another run. agentd strips the environment of the tool servers it spawns (they get PATH and HOME
 * plus their config's `env`) and starts each in a session of its own, so rule 1 cannot see them;
 * rule 3 can, because the ledger samples the process table while their parent (a vitest worker, an
 * agentd) still lives, and remembers the link after the parent is gone and they were reparented.
 * Rule 3 looks at the parent as first seen: a process found orphaned at its first sighting links to
 * the run only through its group or session, or a mark. Processes are known by pid and start time,
 * so a reused pid is a new process.
 */
import { readFileSync, readdirSync } from 'node:fs';

export const MARK_NAME = 'AGENTD_TEST_RUN';

/**
 * The run's mark as an environment, for a process a test spawns with an environment of its own
 * (empty outside a run that set it); with it the run's per-user data folder, XDG_DATA_HOME, so an agentd
 * started so keeps its default storage folder in the run's, never the user's (test/support/user-data-untouched.ts).
 */
export function testRunEnv(): Record<string, string> {
  const mark = process.env[MARK_NAME];
  const dataHome = process.env.XDG_DATA_HOME;
  return { ...(mark && { [MARK_NAME]: mark }), ...(dataHome && { XDG_DATA_HOME: dataHome }) };
}

/** One process as /proc shows it. */
export interface ProcSample {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Start time in clock ticks since boot. */
  start: number;
  /** Command line, arguments joined by spaces (empty for kernel threads and zombies). */
  cmd: string;
  /** Whether its environment holds this run's mark. */
  marked: boolean;
}

/** Fields after "pid (comm) " of /proc/<pid>/stat: state ppid pgrp session ... starttime (22nd field). */
function statFields(pid: number | 'self'): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'latin1')
    .replace(/^.*\) /s, '')
    .split(' ');
}

/** Start time of a process in clock ticks since boot. */
export const startTicks = (pid: number | 'self'): number => Number(statFields(pid)[19]);

/** The process `pid` as it is now, or undefined once it is gone (or not ours to read). */
export function readProcess(pid: number, mark: string, since = 0): ProcSample | undefined {
  const sample = readStat(pid);
  if (!sample || sample.start < since) return sample; // older than the run: never ours, skip the costly reads
  return readDetails(sample, mark);
}

/** pid, links and start time (one read); cmd and mark not read yet. */
function readStat(pid: number): ProcSample | undefined {
  try {
    const f = statFields(pid);
    return {
      pid,
      ppid: Number(f[1]),
      pgid: Number(f[2]),
      sid: Number(f[3]),
      start: Number(f[19]),
      cmd: '',
      marked: false,
    };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Adds the command line and whether the environment holds `mark`. */
function readDetails(sample: ProcSample, mark: string): ProcSample | undefined {
  try {
    sample.cmd = readFileSync(`/proc/${sample.pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
    sample.marked = readFileSync(`/proc/${sample.pid}/environ`, 'latin1').split('\0').includes(`${MARK_NAME}=${mark}`);
    return sample;
  } catch {
    return undefined; // gone meanwhile, or another user's process
  }
}

/** Every process /proc lists now; `read` decides which are read (by pid), `details` whose command line and environment. */
export function scanProcesses(
  mark: string,
  since = 0,
  details: (p: ProcSample) => boolean = () => true,
  read: (pid: number) => boolean = () => true,
): { pids: number[]; samples: ProcSample[] } {
  const pids: number[] = [];
  const samples: ProcSample[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    pids.push(pid);
    if (!read(pid)) continue;
    const stat = readStat(pid);
    const sample = stat && stat.start >= since && details(stat) ? readDetails(stat, mark) : stat;
    if (sample) samples.push(sample);
  }
  return { pids, samples };
}

export interface LedgerOptions {
  /** This run's mark (the value of AGENTD_TEST_RUN). */
  mark: string;
  /** Start ticks of the run: older processes are never the run's. */
  since: number;
  /** The process that runs the tests (vitest); everything it starts is the run's. */
  root: number;
  /** Never reported, e.g. the root's own ancestors (npm, a shell). */
  ignore?: Iterable<number>;
  /** Children of the root that are the test runner's own machinery (vitest workers), never reported. */
  isRunnerWorker?: (p: ProcSample) => boolean;
}

interface Entry {
  start: number;
  ours: boolean;
}

export class ProcessLedger {
  /** The latest process recorded under each pid. */
  private readonly byPid = new Map<number, Entry>();
  private readonly ignore: Set<number>;
  private lastScan = new Set<number>();

  constructor(private readonly options: LedgerOptions) {
    this.ignore = new Set(options.ignore ?? []);
  }

  /**
   * Scans /proc and records the processes that are new since the last scan; returns them. A pid
   * listed by two scans in a row is the same process (a pid is not reused within a scan interval,
   * short of 32768 processes started meanwhile), so a sample costs one read per new process.
   * With `fresh`, every process is read in full (command line included) and returned.
   */
  observe(fresh = false): ProcSample[] {
    const { pids, samples } = scanProcesses(
      this.options.mark,
      this.options.since,
      (p) => fresh || this.byPid.get(p.pid)?.start !== p.start,
      (pid) => fresh || !this.lastScan.has(pid) || !this.byPid.has(pid),
    );
    this.lastScan = new Set(pids);
    this.record(samples);
    return samples;
  }

  /** Records a snapshot of the process table (all processes alive at one moment). */
  record(snapshot: ProcSample[]): void {
    const inSnapshot = new Map(snapshot.map((p) => [p.pid, p]));
    const resolving = new Set<number>();
    const resolve = (p: ProcSample): Entry => {
      const known = this.byPid.get(p.pid);
      if (known?.start === p.start && known.ours) return known;
      const entry: Entry = known?.start === p.start ? known : { start: p.start, ours: false };
      this.byPid.set(p.pid, entry);
      if (p.start < this.options.since || resolving.has(p.pid)) return entry;
      resolving.add(p.pid);
      // A link counts when the linked process is the one recorded under that pid and not younger than p.
      const linked = (pid: number): boolean => {
        if (pid <= 1 || pid === p.pid) return false;
        const other = inSnapshot.get(pid);
        const e = other && other.start <= p.start ? resolve(other) : this.byPid.get(pid);
        return e !== undefined && e.start <= p.start && e.ours;
      };
      entry.ours = p.marked || p.pid === this.options.root || linked(p.ppid) || linked(p.pgid) || linked(p.sid);
      resolving.delete(p.pid);
      return entry;
    };
    for (const p of [...snapshot].sort((a, b) => a.start - b.start || a.pid - b.pid)) resolve(p);
  }

  /** Whether the process was recorded as the run's own. */
  isOurs(p: Pick<ProcSample, 'pid' | 'start'>): boolean {
    const e = this.byPid.get(p.pid);
    return e !== undefined && e.start === p.start && e.ours;
  }

  /**
   * The run's processes that should be gone: ours, minus the root, the ignored and the runner's
   * workers; of `snapshot` (with command lines), by default of /proc now.
   */
  leftovers(snapshot: ProcSample[] = this.observe(true)): ProcSample[] {
    this.record(snapshot);
    const { root, isRunnerWorker } = this.options;
    return snapshot.filter(
      (p) =>
        p.cmd !== '' &&
        p.pid !== root &&
        !this.ignore.has(p.pid) &&
        this.isOurs(p) &&
        !(p.ppid === root && isRunnerWorker?.(p)),
    );
  }
}

/** This process and the ones that started it (npm, a shell). */
export function ancestorsOfSelf(): Set<number> {
  const chain = new Set([process.pid]);
  for (let pid = Number(statFields('self')[1]); pid > 1 && !chain.has(pid); pid = Number(statFields(pid)[1]))
    chain.add(pid);
  return chain;
}
