/**
 * Global setup: `npm test` leaves no process behind. After the run, a process is a leftover when
 * it started after this vitest process and belongs to this checkout: it runs in a folder of it,
 * names a file of it on its command line, or inherited this run's AGENTD_TEST_RUN mark. Vitest's own
 * workers are ignored. Leftovers are listed, killed, and fail the run. (Two runs in one checkout
 * at the same time would see each other's processes.)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './paths.ts';

const MARK = `AGENTD_TEST_RUN=${randomUUID()}`;

/** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
const startTicks = (pid: number | 'self') => Number(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /s, '').split(' ')[19]);

const parentOf = (pid: number | 'self') => Number(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /s, '').split(' ')[1]);

/** This process and the ones that started it (npm, a shell). */
function ancestors(): Set<number> {
  const chain = new Set([process.pid]);
  for (let pid = parentOf('self'); pid > 1 && !chain.has(pid); pid = parentOf(pid)) chain.add(pid);
  return chain;
}

function leftovers(since: number): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  const mine = ancestors();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || mine.has(pid)) continue;
    try {
      if (startTicks(pid) < since) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      if (!cmd || /vitest[/\\]dist/.test(cmd)) continue;
      const ours =
        `${readlinkSync(`/proc/${pid}/cwd`)}/`.startsWith(ROOT) || cmd.includes(ROOT) || readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(MARK);
      if (ours) found.push({ pid, cmd });
    } catch {
      // Gone meanwhile, or another user's process.
    }
  }
  return found;
}

export function setup(): (() => Promise<void>) | undefined {
  if (process.platform !== 'linux') return undefined;
  const since = startTicks('self');
  process.env.AGENTD_TEST_RUN = MARK.slice(MARK.indexOf('=') + 1);
  return async () => {
    let left = leftovers(since);
    for (let waited = 0; left.length > 0 && waited < 5_000; waited += 250) {
      await sleep(250); // processes still in their graceful exit
      left = leftovers(since);
    }
    if (left.length === 0) return;
    for (const { pid } of left) process.kill(pid, 'SIGKILL');
    process.exitCode = 1; // a throwing teardown is reported by vitest but does not fail the run
    console.error(`\nnpm test left ${left.length} process(es) behind (now killed):\n${left.map((p) => `  ${p.pid} ${p.cmd.slice(0, 200)}`).join('\n')}`);
  };
}
