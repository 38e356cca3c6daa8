/**
 * Global setup: `npm test` leaves no process behind, and touches no process it did not start.
 *
 * The run marks its environment with AGENTD_TEST_RUN=<a fresh uuid> (vitest's workers inherit it;
 * tests pass it on where they spawn with a clean environment, see `testRunEnv`), and a ledger
 * samples the process table every SAMPLE_MS during the run (a tenth of a millisecond per sample), so a tool server that agentd started
 * with a stripped environment in a session of its own is still known as the run's: by its parent
 * when first seen, or its process group or session. The rule is in process-ledger.ts. After the
 * run, the run's processes that are still alive (vitest's own workers aside) get a grace period to
 * finish exiting, then are listed, killed, and fail the run. A process the run did not start (a
 * demo someone runs in this checkout, another test run) is never reported or killed.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { firstInRun } from './first-in-run.ts';
import { ancestorsOfSelf, MARK_NAME, ProcessLedger, startTicks, type ProcSample } from './process-ledger.ts';

const SAMPLE_MS = 50;
/** How long leftovers may take to finish a graceful exit (a loaded machine is slow to reap). */
const GRACE_MS = 10_000;

export function setup(): (() => Promise<void>) | undefined {
  if (process.platform !== 'linux' || !firstInRun('no-leftovers')) return undefined;
  const mark = randomUUID();
  process.env[MARK_NAME] = mark;
  const ledger = new ProcessLedger({
    mark,
    since: startTicks('self'),
    root: process.pid,
    ignore: ancestorsOfSelf(),
    isRunnerWorker: (p: ProcSample) => /vitest[/\\]dist/.test(p.cmd),
  });
  ledger.observe();
  const sampler = setInterval(() => ledger.observe(), SAMPLE_MS);
  sampler.unref();
  return async () => {
    let left = ledger.leftovers();
    for (const deadline = Date.now() + GRACE_MS; left.length > 0 && Date.now() < deadline;) {
      await sleep(250); // processes still in their graceful exit
      left = ledger.leftovers();
    }
    clearInterval(sampler);
    if (left.length === 0) return;
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    process.exitCode = 1; // a throwing teardown is reported by vitest but does not fail the run
    console.error(
      `\nnpm test left ${left.length} process(es) behind (now killed):\n${left.map((p) => `  ${p.pid} ${p.cmd.slice(0, 200)}`).join('\n')}`,
    );
  };
}
