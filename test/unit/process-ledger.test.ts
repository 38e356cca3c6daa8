/**
 * The leftover check's rule (test/support/process-ledger.ts) on made-up process tables: only what the
 * run started is reported — by its mark, as a descendant of the run, or through its process group
 * or session — never a process by the folder it runs in or the files it names.
 */
import { describe, expect, it } from 'vitest';
import { ProcessLedger, type ProcSample } from '../support/process-ledger.ts';

const SINCE = 1_000;
const ROOT_PID = 100;
const proc = (pid: number, over: Partial<ProcSample> = {}): ProcSample => ({
  pid,
  ppid: 1,
  pgid: pid,
  sid: pid,
  start: SINCE + pid,
  cmd: `cmd-${pid}`,
  marked: false,
  ...over,
});
const ledger = () =>
  new ProcessLedger({
    mark: 'this-run',
    since: SINCE,
    root: ROOT_PID,
    ignore: [90],
    isRunnerWorker: (p) => p.cmd.includes('vitest/dist/workers'),
  });
const pids = (list: ProcSample[]) => list.map((p) => p.pid).sort((a, b) => a - b);

// The run: vitest (100, started by npm 90 in the shell's session 10), one worker (101).
const runner = proc(ROOT_PID, { ppid: 90, pgid: 90, sid: 10, start: SINCE });
const npm = proc(90, { ppid: 10, pgid: 90, sid: 10, start: SINCE - 50 });
const worker = proc(101, { ppid: ROOT_PID, pgid: 90, sid: 10, cmd: 'node vitest/dist/workers/forks.js', marked: true });

describe('leftover classification', () => {
  it('reports a marked process, and never one that is unmarked, marked by another run, or older than the run — wherever it runs', () => {
    const l = ledger();
    const marked = proc(200, { marked: true });
    const demoInCheckout = proc(201, { cmd: 'node /work/main/tools/demo/main.ts' }); // started by a user's shell
    const otherRun = proc(202, { ppid: 7, sid: 7 }); // marked by another run: `marked` is false for this run's mark
    const old = proc(203, { start: SINCE - 1, marked: true });
    expect(pids(l.leftovers([npm, runner, worker, marked, demoInCheckout, otherRun, old]))).toEqual([200]);
  });

  it('reports the descendants of the run, even after their parent died and they were reparented', () => {
    const l = ledger();
    // A worker runs agentd in-process; agentd spawns a tool server (stripped env, own session).
    const tool = proc(300, { ppid: 101 });
    // An agentd child process (marked) spawns a tool server of its own, then is killed -9.
    const agentd = proc(301, { ppid: 101, pgid: 90, sid: 10, marked: true });
    const orphanToBe = proc(302, { ppid: 301 });
    l.record([npm, runner, worker, tool, agentd, orphanToBe]);
    const reparented = { ...orphanToBe, ppid: 1 };
    const toolReparented = { ...tool, ppid: 1 };
    expect(pids(l.leftovers([npm, runner, toolReparented, reparented]))).toEqual([300, 302]);
  });

  it('reports an orphan first seen after its parent died when its process group or session leader was the run’s', () => {
    const l = ledger();
    const launcher = proc(400, { ppid: 101, marked: true }); // npx-like launcher, leads its own group and session
    l.record([npm, runner, worker, launcher]);
    const groupChild = proc(401, { ppid: 1, pgid: 400, sid: 400 });
    const sessionChild = proc(402, { ppid: 1, pgid: 402, sid: 400 });
    expect(pids(l.leftovers([npm, runner, groupChild, sessionChild]))).toEqual([401, 402]);
  });

  it('does not report vitest, its ancestors or its workers, nor a process started by an outsider that shares the shell session', () => {
    const l = ledger();
    const bystander = proc(500, { ppid: 10, pgid: 500, sid: 10, cmd: 'sleep 300' }); // a job of the same shell
    expect(l.leftovers([npm, runner, worker, bystander])).toEqual([]);
  });

  it('treats a reused pid as a new process', () => {
    const l = ledger();
    l.record([npm, runner, worker, proc(600, { ppid: 101 })]);
    const reused = proc(600, { start: SINCE + 5_000, ppid: 1, sid: 600, pgid: 600, cmd: 'sleep 300' });
    expect(l.leftovers([npm, runner, reused])).toEqual([]);
  });

  it('a process whose first sighting already shows it orphaned, with no mark and no link, is not the run’s', () => {
    const l = ledger();
    l.record([npm, runner, worker]);
    expect(l.leftovers([npm, runner, proc(700, { ppid: 1 })])).toEqual([]);
  });
});
