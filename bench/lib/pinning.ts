/**
 * Cores apart for the service and for its load (the simulator, redis-server, the load generator), so a
 * benchmark of `--workers` measures agentd's scaling and not its share of cores with the load.
 */
import { execFileSync } from 'node:child_process';

/** `taskset -c` lists: agentd's cores and the load's. */
export interface Pinning {
  agentd: string;
  load: string;
}

const LIST = /^\d+(-\d+)?(,\d+(-\d+)?)*$/;

/**
 * `override` (`<agentd cores>:<load cores>`, e.g. `0-1:2-3`) wins; without it, a machine of 4 or more cores gives
 * agentd CPUs 0 and 1 and the load the rest, and a smaller one is not pinned (undefined).
 */
export function planPinning(cpuCount: number, override?: string): Pinning | undefined {
  if (override) {
    const [agentd, load, ...rest] = override.split(':');
    if (!agentd || !load || rest.length > 0 || !LIST.test(agentd) || !LIST.test(load))
      throw new Error(`BENCH_SCALE_CPUS must read <agentd cores>:<load cores> (e.g. 0-1:2-3), got "${override}"`);
    return { agentd, load };
  }
  return cpuCount >= 4 ? { agentd: '0,1', load: cpuCount === 4 ? '2,3' : `2-${cpuCount - 1}` } : undefined;
}

/** `argv` as a command and its arguments, run under `taskset -c cpus` when `cpus` is set. */
export const onCpus = (argv: readonly string[], cpus: string | undefined): [string, string[]] =>
  cpus === undefined ? [argv[0]!, argv.slice(1)] : ['taskset', ['-c', cpus, ...argv]];

/** Pins this process (every thread: it is the load generator) to `cpus`; the returned function puts it back. */
export function pinSelf(cpus: string): () => void {
  const pid = String(process.pid);
  const taskset = (...args: string[]) => {
    try {
      return execFileSync('taskset', args, { encoding: 'utf8' });
    } catch (err) {
      throw new Error(
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'taskset is missing (util-linux)' : String(err),
      );
    }
  };
  const before = /:\s*(\S+)\s*$/.exec(taskset('-cp', pid))?.[1];
  taskset('-a', '-cp', cpus, pid);
  return () => void (before && taskset('-a', '-cp', before, pid));
}
