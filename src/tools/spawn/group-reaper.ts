/**
 * Ends every stdio tool server's process group when agentd ends, however it ends (`kill -9` included):
 * one small watcher process per agentd, a shell reading a pipe from agentd.
 *
 * Contracts:
 * - Linux only (it proves a group by /proc). `groupReaper()` is this process's reaper, started at the first
 *   stdio server (`start()`); it is `/bin/sh -c REAPER_SCRIPT` in a session of its own (a signal to agentd's
 *   process group or terminal does not reach it), ignoring HUP, INT, QUIT, TERM and PIPE, with cwd `/`, an
 *   environment of PATH only, stdin a pipe from agentd, and no other descriptor of agentd's. It does not keep
 *   agentd's event loop alive. Memory: one shell (under 2 MB resident, most of it shared), whatever the number of servers.
 * - `watch(pid)` (right after the spawn, in the same synchronous step, before Node can reap the child) reads the
 *   leader's start time and writes `+ <pid> <start>`; `unwatch(pid)` (once the leader has exited) writes
 *   `- <pid> <start>`. A line is written at once (libuv writes a pipe synchronously while it has room; the
 *   shell reads as it comes).
 * - When the pipe closes (agentd exited: the kernel closes its descriptors on any death, SIGKILL included), the
 *   reaper sends SIGKILL to each group still listed whose leader is the listed process (same start time, not a
 *   zombie), then exits. Within milliseconds: nothing waits for a grace period, agentd is gone.
 * - Why the leader must run: a session leader cannot change its group (agentd starts each server with
 *   setsid), so while it runs its pid names its group; once it is gone the id could name a reused group
 *   (child-registry.ts). So while the reaper runs, the transport does not add the parent-death signal
 *   (parent-death.ts), which would kill the leader at the same moment and leave its group unprovable.
 * - Why this mechanism: a parent-death signal (PR_SET_PDEATHSIG, `setpriv --pdeathsig`) reaches the direct child
 *   only and is cleared at fork, so a launcher's children (`npx`, a shell without `exec`) survive it; a subreaper
 *   (PR_SET_CHILD_SUBREAPER) needs native code and kills nothing by itself; a cgroup needs root or a delegated
 *   hierarchy. A pipe's end is the one thing the kernel reports on every death, to a process that can act on it.
 * - When the reaper cannot start (no `/bin/sh`) or has died, `start()` answers false and the transport falls back to the
 *   parent-death signal; a reaper that died is started again a second later (or at the next `start()`) and told
 *   of every group still watched.
 * - Limits: a process that leaves its group (`setsid`, a daemonizing server) escapes, as it escapes `close()`.
 *   A group whose leader already exited when agentd died, and an agentd killed between a spawn and its
 *   `watch` (one synchronous step), are left to the next start's reaping (child-registry.ts).
 * - Elsewhere (macOS, Windows): `groupReaper()` is undefined; today's behaviour (close() and the next start's reaping).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Writable } from 'node:stream';
import { systemProcs } from './child-registry.ts';

/** The watcher, in POSIX sh builtins only (dash, bash, busybox ash): reads `+|- pid start` lines; at EOF kills. */
export const REAPER_SCRIPT = `# agentd group reaper: kills the listed process groups when agentd's pipe closes
trap '' HUP INT QUIT TERM PIPE
live=' '
while read -r op pid start; do
  case "$pid:$start" in *[!0-9:]* | :* | *:) continue ;; esac
  case "$op$live" in
    "+"*" $pid:$start "*) ;;
    "+"*) live="$live$pid:$start " ;;
    "-"*" $pid:$start "*) live="\${live%% $pid:$start *} \${live#* $pid:$start }" ;;
  esac
done
set -f
for entry in $live; do
  pid=\${entry%%:*}
  { read -r stat < "/proc/$pid/stat"; } 2>/dev/null || continue
  set -- \${stat##*') '}
  [ "$1" != Z ] && [ "\${20}" = "\${entry#*:}" ] && kill -s KILL -- "-$pid" 2>/dev/null
done
exit 0
`;

const RESTART_MS = 1000;

export interface GroupReaper {
  /** Whether a reaper process runs now (starting it if none does). */
  start(): boolean;
  /** Lists the group led by `pid` (a child just spawned in a session of its own). */
  watch(pid: number): void;
  /** The group led by `pid` needs no watching any more (its leader exited). */
  unwatch(pid: number): void;
  /** The reaper process's pid, while it runs. */
  readonly pid: number | undefined;
}

/** A reaper (Linux): `groupReaper()` is the one of this process; more for tests. */
export function createGroupReaper(): GroupReaper {
  const watched = new Map<number, number>();
  let child: ChildProcessByStdio<Writable, null, null> | undefined;
  let restart: NodeJS.Timeout | undefined;

  const send = (line: string) => {
    if (child?.stdin.writable) child.stdin.write(line);
  };
  const launch = (): boolean => {
    if (child) return true;
    let started: ChildProcessByStdio<Writable, null, null>;
    try {
      started = spawn('/bin/sh', ['-c', REAPER_SCRIPT], {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
        cwd: '/',
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
      });
    } catch {
      return false;
    }
    started.on('error', () => {}); // a failed start: pid undefined, handled below; exit follows otherwise
    started.stdin.on('error', () => {}); // EPIPE once it is gone: handled by 'exit'
    if (started.pid === undefined) return false;
    started.unref();
    (started.stdin as Writable & { unref?: () => void }).unref?.();
    child = started;
    started.once('exit', () => {
      if (child !== started) return;
      child = undefined;
      if (watched.size === 0 || restart) return;
      restart = setTimeout(() => {
        restart = undefined;
        launch();
      }, RESTART_MS);
      restart.unref();
    });
    for (const [pid, start] of watched) send(`+ ${pid} ${start}\n`);
    return true;
  };

  return {
    start: launch,
    watch(pid) {
      const start = systemProcs.stat(pid)?.start;
      if (start === undefined) return;
      watched.set(pid, start);
      send(`+ ${pid} ${start}\n`);
    },
    unwatch(pid) {
      const start = watched.get(pid);
      if (start === undefined) return;
      watched.delete(pid);
      send(`- ${pid} ${start}\n`);
    },
    get pid() {
      return child?.pid;
    },
  };
}

let shared: GroupReaper | undefined;

/** This process's reaper on Linux (one per agentd, however many servers); undefined elsewhere. */
export function groupReaper(): GroupReaper | undefined {
  if (process.platform !== 'linux') return undefined;
  shared ??= createGroupReaper();
  return shared;
}
