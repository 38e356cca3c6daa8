/**
 * Ends every stdio server's process group when agentd ends, however it ends (`kill -9` included). Linux only: one
 * `/bin/sh -c REAPER_SCRIPT` per agentd, reading a pipe from agentd, in a session of its own (HUP, INT, QUIT, TERM,
 * PIPE ignored), cwd `/`, env PATH only, no other descriptor of agentd's; it does not keep the event loop alive.
 * - `watch(pid)` (in the spawn's own synchronous step) writes `+ <pid> <start>`; `unwatch(pid)` `- <pid> <start>`.
 * - When the pipe closes, it SIGKILLs each listed group whose leader is still the listed process (same start time,
 *   not a zombie), then exits.
 * - `start()` is false when no reaper can run (the transport then uses parent-death.ts); one that died is started
 *   again a second later (or at the next `start()`) and told every watched group.
 * - Elsewhere `groupReaper()` is undefined. Why a pipe, and the limits: docs/internals/tools.md.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Writable } from 'node:stream';
import { systemProcs } from '../../procs.ts';

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

type GroupReaper = ReturnType<typeof createGroupReaper>;

/** A reaper (Linux): `groupReaper()` is the one of this process; more for tests. */
export function createGroupReaper() {
  const watched = new Map<number, number>();
  let child: ChildProcessByStdio<Writable, null, null> | undefined;
  let restart: NodeJS.Timeout | undefined;

  const send = (line: string) => {
    if (child?.stdin.writable) child.stdin.write(line);
  };
  /** Whether a reaper process runs now (starting it if none does). */
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
    /** Lists the group led by `pid` (a child just spawned in a session of its own). */
    watch(pid: number) {
      const start = systemProcs.stat(pid)?.start;
      if (start === undefined) return;
      watched.set(pid, start);
      send(`+ ${pid} ${start}\n`);
    },
    /** The group led by `pid` needs no watching any more (its leader exited). */
    unwatch(pid: number) {
      const start = watched.get(pid);
      if (start === undefined) return;
      watched.delete(pid);
      send(`- ${pid} ${start}\n`);
    },
    /** The reaper process's pid, while it runs. */
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
