/**
 * The processes under test: the model simulator and the agentd service, each a separate `node`
 * process on loopback, started on port 0. Every child is killed when the bench exits, fails or
 * is interrupted. CPU and memory are read from /proc, so measuring costs the service nothing.
 */
import type { ProbeReply } from '../probe.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

export const ROOT = resolve(import.meta.dirname, '../..');
const CLK_TCK = 100;
const children = new Set<ChildProcess>();
const scratchDirs = new Set<string>();

function killAll(): void {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
  for (const d of scratchDirs) rmSync(d, { recursive: true, force: true });
  scratchDirs.clear();
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}: stopping children\n`);
    killAll();
    process.exit(130);
  });
}

/** A temporary directory removed when the bench exits. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `agentd-bench-${prefix}-`));
  scratchDirs.add(dir);
  return dir;
}

export interface ProcSample {
  /** user + system CPU of the whole process (all threads), ms. */
  cpuMs: number;
  /** system (kernel) CPU of the whole process, ms. */
  sysMs: number;
  /** user + system CPU of the main thread (the event loop), ms. */
  mainCpuMs: number;
  rssKb: number;
}

/** utime and stime of a /proc stat file, ms. */
function statCpu(path: string): { user: number; sys: number } {
  const stat = readFileSync(path, 'utf8');
  // Fields after the command name (which may hold spaces) start at index 2 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(fields[11]) * 1000) / CLK_TCK, sys: (Number(fields[12]) * 1000) / CLK_TCK };
}

export function sampleProc(pid: number): ProcSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = /VmRSS:\s+(\d+)/.exec(status);
  const all = statCpu(`/proc/${pid}/stat`);
  const main = statCpu(`/proc/${pid}/task/${pid}/stat`);
  return { cpuMs: all.user + all.sys, sysMs: all.sys, mainCpuMs: main.user + main.sys, rssKb: Number(rss?.[1] ?? 0) };
}

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  logFile: string;
  sample(): ProcSample;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code once it is gone. */
  stop(graceMs?: number): Promise<number | null>;
}

interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  ipc?: boolean;
  /** Resolves with a value once a line of stdout shows the child is ready. */
  ready: (line: string) => string | undefined;
  timeoutMs?: number;
}

async function spawnNode(name: string, script: string, args: string[], opts: SpawnOptions): Promise<{ child: Child; value: string }> {
  const logFile = join(scratchDir(name), 'out.log');
  const log = createWriteStream(logFile);
  const proc = spawn(process.execPath, ['--import', 'tsx', ...(opts.nodeArgs ?? []), script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe', ...(opts.ipc ? (['ipc'] as const) : [])],
  });
  children.add(proc);
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => { children.delete(proc); res(code); }));
  proc.stderr?.pipe(log);
  const lines = createInterface({ input: proc.stdout! });
  const value = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${name} not ready within ${opts.timeoutMs ?? 20_000} ms (log: ${logFile})`)), opts.timeoutMs ?? 20_000);
    void exited.then((code) => rej(new Error(`${name} exited with ${code} before it was ready (log: ${logFile})`)));
    let found = false;
    lines.on('line', (line) => {
      log.write(`${line}\n`);
      if (found) return;
      const v = opts.ready(line);
      if (v !== undefined) {
        found = true;
        clearTimeout(timer);
        res(v);
      }
    });
  });
  const pid = proc.pid!;
  const child: Child = {
    name,
    proc,
    pid,
    logFile,
    sample: () => sampleProc(pid),
    async stop(graceMs = 5000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  return { child, value };
}

export interface Simulator extends Child {
  /** `http://127.0.0.1:<port>/v1` */
  url: string;
  port: number;
}

/** The model simulator with its default knobs (ttft 0, unpaced, echo); benchmarks pace with directives. */
export async function startSimulator(extraArgs: string[] = []): Promise<Simulator> {
  const { child, value } = await spawnNode('simulator', 'tools/simulator/main.ts', ['--port', '0', ...extraArgs], {
    ready: (line) => /listening on (http:\/\/\S+)/.exec(line)?.[1],
  });
  return { ...child, url: value, port: Number(new URL(value).port) };
}

export interface ServiceOptions {
  /** Agent YAML under bench/agents/ (default bench.yml). */
  agent?: string;
  modelUrl: string;
  /** Directory for `--cpu-prof` output; profiling is on when set. */
  cpuProfDir?: string;
  env?: NodeJS.ProcessEnv;
  /** `--workers N`: ready once all N workers are; `pid` is then the supervisor's. */
  workers?: number;
}

export interface Service extends Child {
  port: number;
  /** The JSONL store's directory (BENCH_DATA_DIR). */
  dataDir: string;
  url: string;
  wsUrl: string;
  /** Asks the probe (bench/probe.ts): stats after a full GC. */
  stats(): Promise<ProbeStats>;
  /** The service's monotonic clock in µs (the clock of --cpu-prof timestamps). */
  clockUs(): Promise<number>;
}

export type ProbeStats = Omit<Extract<ProbeReply, { gc: boolean }>, 'id'>;

/** agentd as users run it (`src/cli.ts`), with the bench probe and --expose-gc. */
export async function startService(opts: ServiceOptions): Promise<Service> {
  let listening: string | undefined;
  const dataDir = scratchDir('data');
  const nodeArgs = ['--expose-gc', '--import', './bench/probe.ts'];
  if (opts.cpuProfDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`, '--cpu-prof-interval=250');
  // BENCH_AGENTD_ARGS adds command-line flags to every agentd under test (e.g. "--inspect").
  const extraArgs = process.env.BENCH_AGENTD_ARGS?.split(' ').filter(Boolean) ?? [];
  const workers = opts.workers ?? 1;
  let ready = 0;
  const workerArgs = workers > 1 ? ['--workers', String(workers)] : [];
  const { child, value } = await spawnNode('agentd', 'src/cli.ts', ['--agent', join('bench/agents', opts.agent ?? 'bench.yml'), '--web-port', '0', ...workerArgs, ...extraArgs], {
    nodeArgs,
    ipc: true,
    env: { BENCH_MODEL_URL: opts.modelUrl, BENCH_DATA_DIR: dataDir, ...opts.env },
    ready: (line) => {
      listening ??= /"port":(\d+).*listening on/.exec(line)?.[1];
      if (line.includes('"agent ready"')) ready++;
      return ready === workers ? (listening ?? '') : undefined;
    },
    timeoutMs: 30_000,
  });
  if (!value) throw new Error(`agentd did not report its port (log: ${child.logFile})`);
  const port = Number(value);
  let nextId = 1;
  const ask = <T>(op: string): Promise<T> =>
    new Promise<T>((res, rej) => {
      const id = nextId++;
      const timer = setTimeout(() => { child.proc.off('message', onMessage); rej(new Error(`probe ${op} timed out`)); }, 30_000);
      const onMessage = (m: { id: number } & T) => {
        if (m.id !== id) return;
        clearTimeout(timer);
        child.proc.off('message', onMessage);
        res(m);
      };
      child.proc.on('message', onMessage);
      child.proc.send({ id, op });
    });
  return {
    ...child,
    port,
    dataDir,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/`,
    stats: () => ask<ProbeStats>('stats'),
    clockUs: async () => (await ask<{ us: number }>('clock')).us,
  };
}

/** Pids of the processes whose parent is `pid` (the workers of `--workers`). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

export interface RedisProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * A private redis-server on a free loopback port (no persistence: the benchmark measures agentd, and
 * its notes say what AOF adds), killed with the other children.
 */
export async function startRedisServer(): Promise<RedisProcess> {
  const port = await new Promise<number>((res, rej) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => res(p));
    });
    probe.once('error', rej);
  });
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(proc);
  const exited = new Promise<void>((res) => proc.once('exit', () => { children.delete(proc); res(); }));
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error('redis-server did not start (is it installed? apt-get install -y redis-server)')), 10_000);
    proc.once('error', (err) => rej(new Error(`redis-server: ${err.message} (apt-get install -y redis-server)`)));
    proc.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        res();
      }
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: proc.pid!,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** Busy CPU of the whole machine (all cores, all processes), ms. */
function machineBusyMs(): number {
  const f = readFileSync('/proc/stat', 'utf8').slice(0, 200).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return ((user + nice + system + irq + softirq + steal) * 1000) / CLK_TCK;
}

/**
 * Samples CPU of several processes over a window: ms of CPU per process, `loadgen` (this
 * process) and `other` (everything else on the machine: other jobs sharing it), and wall ms;
 * also each process's main-thread CPU and kernel (system) CPU.
 */
export function cpuWindow(pids: Record<string, number>) {
  const t0 = performance.now();
  const self0 = process.cpuUsage();
  const busy0 = machineBusyMs();
  const start = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, sampleProc(pid)]));
  return () => {
    const wallMs = performance.now() - t0;
    const self = process.cpuUsage(self0);
    const cpuMs: Record<string, number> = { loadgen: (self.user + self.system) / 1000 };
    const mainMs: Record<string, number> = {};
    const sysMs: Record<string, number> = {};
    for (const [k, pid] of Object.entries(pids)) {
      const now = sampleProc(pid);
      cpuMs[k] = now.cpuMs - (start[k]?.cpuMs ?? 0);
      mainMs[k] = now.mainCpuMs - (start[k]?.mainCpuMs ?? 0);
      sysMs[k] = now.sysMs - (start[k]?.sysMs ?? 0);
    }
    const ours = Object.values(cpuMs).reduce((a, b) => a + b, 0);
    cpuMs.other = Math.max(0, machineBusyMs() - busy0 - ours);
    return { wallMs, cpuMs, mainMs, sysMs };
  };
}

/** Peak RSS (kB) of a process, polled every `everyMs` until stopped. */
export function rssPeak(pid: number, everyMs = 200) {
  let peak = sampleProc(pid).rssKb;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, sampleProc(pid).rssKb);
    } catch {
      /* the process is gone */
    }
  }, everyMs);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

/** Total bytes of the files directly in `dir`. */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const f of readdirSync(dir, { withFileTypes: true })) if (f.isFile()) total += statSync(join(dir, f.name)).size;
  return total;
}
