/**
 * The leftover check against real processes: a ledger for a run of its own (a fresh mark, no root)
 * reports that run's leaked processes — a marked `sleep`, and a tool server a marked parent spawned
 * with a stripped environment in a session of its own before it was killed — and leaves alone a
 * `sleep` with no mark, one marked by another run, and a "demo" running in this checkout that names
 * a file of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ROOT } from '../support/paths.ts';
import { MARK_NAME, ProcessLedger, readProcess, scanProcesses, startTicks } from '../support/process-ledger.ts';
import { PATIENT } from '../support/wait.ts';

const linux = process.platform === 'linux';
/** Every process this file started (children and grandchildren), killed after it. */
const spawned: number[] = [];
const children: ChildProcess[] = [];
const track = (child: ChildProcess): ChildProcess => {
  children.push(child);
  if (child.pid !== undefined) spawned.push(child.pid);
  return child;
};
/** Running, i.e. neither gone nor a zombie waiting to be reaped by whoever adopted it. */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return false;
  }
};

afterAll(async () => {
  const exited = children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => once(c, 'exit'));
  for (const pid of spawned) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all(exited);
  await vi.waitFor(() => expect(spawned.filter(alive)).toEqual([]), PATIENT);
});

describe.skipIf(!linux)('leftover check on real processes', () => {
  it('reports what the run started and leaves the rest alone', async () => {
    const mark = randomUUID();
    const since = startTicks('self');
    const ledger = new ProcessLedger({ mark, since, root: 0 }); // root 0: the run is known by its mark only
    const env = { PATH: process.env.PATH ?? '' };

    const unmarked = track(spawn('sleep', ['300'], { env, stdio: 'ignore' }));
    const otherRun = track(spawn('sleep', ['300'], { env: { ...env, [MARK_NAME]: randomUUID() }, stdio: 'ignore' }));
    const demo = track(
      spawn('sh', ['-c', 'sleep 300; :', `${ROOT}tools/demo/main.ts`], { cwd: ROOT, env, stdio: 'ignore' }),
    );
    const leaked = track(spawn('sleep', ['300'], { env: { ...env, [MARK_NAME]: mark }, stdio: 'ignore' }));
    // Like agentd: a marked parent starts a tool server with only PATH, detached (its own session).
    const script = `const c = require('node:child_process').spawn('sleep', ['300'], { env: { PATH: process.env.PATH }, detached: true, stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 1e6);`;
    const parent = track(
      spawn(process.execPath, ['-e', script], {
        env: { ...env, [MARK_NAME]: mark },
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
    const tool = Number(line.toString().trim());
    spawned.push(tool);
    const demoChild = await vi.waitFor(() => {
      const child = scanProcesses(mark, since).samples.find((p) => p.ppid === demo.pid && p.cmd === 'sleep 300');
      expect(child).toBeDefined();
      return child!.pid;
    }, PATIENT);
    spawned.push(demoChild);

    expect(readProcess(tool, mark, since)).toMatchObject({ ppid: parent.pid, sid: tool, marked: false });
    ledger.observe(); // a sample while the parent lives (the global setup samples every 100 ms)
    parent.kill('SIGKILL');
    await vi.waitFor(() => expect(readProcess(tool, mark, since)?.ppid).not.toBe(parent.pid), PATIENT);

    const reported = ledger.leftovers().map((p) => p.pid);
    expect(reported.sort((a, b) => a - b)).toEqual([leaked.pid!, tool].sort((a, b) => a - b));
    for (const outsider of [unmarked.pid!, otherRun.pid!, demo.pid!, demoChild]) {
      expect(reported).not.toContain(outsider);
      expect(alive(outsider)).toBe(true);
    }
    expect(readProcess(demo.pid!, mark, since)?.cmd).toContain(ROOT);
  });
});
