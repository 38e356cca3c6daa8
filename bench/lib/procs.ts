/**
 * The processes under test: the model simulator and the agentd service, each a separate `node`
 * process on loopback, started on port 0. Every child is killed when the bench exits, fails or
 * is interrupted. CPU and memory are read from /proc, so measuring costs the service nothing.
 *
 * agentd runs as users run it, compiled (`node dist/src/cli.js`, built by `npm run build`), or from
 * its TypeScript sources under tsx when BENCH_RUN=tsx. The simulator is tooling and always runs
 * under tsx. Each result records how agentd ran and which engine served it (takeRuntime).
 */
import type { ProbeReply } from '../probe-types.ts';
import { onCpus } from './pinning.ts';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

export const ROOT = resolve(import.meta.dirname, '../..');
const CLK_TCK = 100;
/** Every child alive, and whether it leads a process group of its own (killed whole). */
const children = new Map<ChildProcess, boolean>();
const scratchDirs = new Set<string>();

function killAll(): void {
  for (const [c, group] of children) {
    try {
      if (group && c.pid) process.kill(-c.pid, 'SIGKILL');
      else c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
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

/**
 * Kills `proc` with the other children when the bench exits (with `group`, its whole process group:
 * spawn it `detached`); resolves with its exit code once it is gone.
 */
export function track(proc: ChildProcess, group = false): Promise<number | null> {
  children.set(proc, group);
  return new Promise((res) =>
    proc.once('exit', (code) => {
      children.delete(proc);
      res(code);
    }),
  );
}

/** A loopback port that was free a moment ago (for a child that must be told its port up front). */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => res(p));
    });
    probe.once('error', rej);
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

/** How agentd runs: `compiled` (dist/, as users run it) or `tsx` (the TypeScript sources). */
export type RunKind = 'compiled' | 'tsx';

/** BENCH_RUN: `compiled` (default) or `tsx`. */
export const RUN: RunKind = (() => {
  const v = process.env.BENCH_RUN?.trim() || 'compiled';
  if (v !== 'compiled' && v !== 'tsx') throw new Error(`BENCH_RUN must be compiled or tsx, not ${JSON.stringify(v)}`);
  return v;
})();

/** The compiled entry, `dist/src/cli.js` (relative to ROOT, the children's cwd): throws when it was never built. */
export function compiledEntry(): string {
  if (!existsSync(join(ROOT, 'dist/src/cli.js')))
    throw new Error(
      `${join(ROOT, 'dist/src/cli.js')} is missing: run npm run build first (or BENCH_RUN=tsx to run the TypeScript sources)`,
    );
  return 'dist/src/cli.js';
}

let staleChecked = false;
/** Warns once when a file under src/ or machines/ is newer than the build (the run would measure older code). */
function warnIfStale(): void {
  if (staleChecked) return;
  staleChecked = true;
  const built = statSync(join(ROOT, 'dist/src/cli.js')).mtimeMs;
  const newer = (dir: string): string | undefined => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      if (!e.isFile() || !e.name.endsWith('.ts')) continue;
      const path = join(e.parentPath, e.name);
      if (statSync(path).mtimeMs > built) return path;
    }
    return undefined;
  };
  const found = newer('src') ?? newer('machines');
  if (found)
    process.stderr.write(
      `bench: ${found} is newer than dist/ (built ${new Date(built).toISOString()}): the compiled service may be stale; run npm run build\n`,
    );
}

/** How agentd ran in one benchmark, recorded in its result beside the machine's speed. */
export interface Runtime {
  /** `compiled`, `tsx`, `in-process` (inside the bench process, under tsx), or several joined by ` + `. */
  run: string;
  /** The HTTP engine GET /api/health reported (`uws`, `node`), several joined by ` + `. */
  engine: string;
}

const seen = { runs: new Set<string>(), engines: new Set<string>() };

/** Records an agentd started by a benchmark (startService does it; suites that start their own call it). */
export function noteRuntime(run: RunKind | 'in-process', engine: string | undefined): void {
  seen.runs.add(run);
  seen.engines.add(engine ?? 'unknown');
}

/** How agentd ran since the last call (bench/run.ts calls it around each benchmark). */
export function takeRuntime(): Runtime {
  const runtime = { run: [...seen.runs].join(' + ') || RUN, engine: [...seen.engines].join(' + ') || 'unknown' };
  seen.runs.clear();
  seen.engines.clear();
  return runtime;
}

/** Status and body of one GET to 127.0.0.1 on a connection of its own (closed after), or undefined when nothing answers. */
export function httpGet(
  port: number,
  path: string,
  timeoutMs = 2_000,
): Promise<{ status: number; body: string } | undefined> {
  return new Promise((res) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs }, (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (d: string) => (body += d));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      r.on('error', () => res(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(undefined));
  });
}

/** `engine` of GET /api/health (undefined when the service does not report one). */
export async function healthEngine(port: number): Promise<string | undefined> {
  const r = await httpGet(port, '/api/health', 10_000);
  const engine = r?.status === 200 ? (JSON.parse(r.body) as { engine?: unknown }).engine : undefined;
  return typeof engine === 'string' ? engine : undefined;
}

interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  /** Node flags before the script (the simulator gets `--import tsx`). */
  nodeArgs?: string[];
  ipc?: boolean;
  /** Resolves with a value once a line of stdout shows the child is ready. */
  ready: (line: string) => string | undefined;
  timeoutMs?: number;
  /** Working directory (default ROOT). */
  cwd?: string;
  /** CPUs the process may run on (`taskset -c`, e.g. "0"; it execs node, so the pid is node's). */
  cpus?: string | undefined;
}

/** `node [nodeArgs] script args`, its stderr (and stdout) in a scratch log; resolves once `ready` matched a line of stdout. */
export async function spawnNode(
  name: string,
  script: string,
  args: string[],
  opts: SpawnOptions,
): Promise<{ child: Child; value: string }> {
  const logFile = join(scratchDir(name), 'out.log');
  const log = createWriteStream(logFile);
  const argv = [...(opts.nodeArgs ?? []), script, ...args];
  const proc = spawn(...onCpus([process.execPath, ...argv], opts.cpus), {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe', ...(opts.ipc ? (['ipc'] as const) : [])],
  });
  const exited = track(proc);
  proc.stderr?.pipe(log);
  const lines = createInterface({ input: proc.stdout! });
  const value = await new Promise<string>((res, rej) => {
    const timer = setTimeout(
      () => rej(new Error(`${name} not ready within ${opts.timeoutMs ?? 20_000} ms (log: ${logFile})`)),
      opts.timeoutMs ?? 20_000,
    );
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

/** The model simulator with its default knobs (ttft 0, unpaced, echo); benchmarks pace with directives. `cpus`: taskset -c. */
export async function startSimulator(extraArgs: string[] = [], cpus?: string): Promise<Simulator> {
  const { child, value } = await spawnNode('simulator', 'tools/simulator/main.ts', ['--port', '0', ...extraArgs], {
    nodeArgs: ['--import', 'tsx'],
    cpus,
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
  /** CPUs agentd may run on (`taskset -c`). */
  cpus?: string | undefined;
  /**
   * `node bin/agentd.js …`, the command users type: compiled whatever BENCH_RUN says, without the
   * probe or --expose-gc (stats, clockUs and heapSnapshot then reject).
   */
  bin?: boolean;
}

export interface Service extends Child {
  port: number;
  /** The HTTP engine serving (GET /api/health `engine`; AGENTD_ENGINE picks it). */
  engine: string | undefined;
  /** The JSONL store's directory (BENCH_DATA_DIR). */
  dataDir: string;
  url: string;
  wsUrl: string;
  /** Asks the probe (bench/probe.js): stats after a full GC. */
  stats(): Promise<ProbeStats>;
  /** The service's monotonic clock in µs (the clock of --cpu-prof timestamps). */
  clockUs(): Promise<number>;
  /** Writes a heap snapshot (after a full GC) to `path`; resolves once it is written. */
  heapSnapshot(path: string): Promise<void>;
}

export type ProbeStats = Omit<Extract<ProbeReply, { gc: boolean }>, 'id'>;

/**
 * agentd as users run it, with the bench probe and --expose-gc: `node --expose-gc --import
 * ./bench/probe.js dist/src/cli.js …`, or with BENCH_RUN=tsx `node --import tsx --expose-gc --import
 * ./bench/probe.js src/cli.ts …`. AGENTD_ENGINE and the rest of the environment pass through.
 */
export async function startService(opts: ServiceOptions): Promise<Service> {
  let listening: string | undefined;
  const run: RunKind = opts.bin ? 'compiled' : RUN;
  const script = opts.bin ? (compiledEntry(), 'bin/agentd.js') : run === 'compiled' ? compiledEntry() : 'src/cli.ts';
  if (run === 'compiled') warnIfStale();
  const dataDir = scratchDir('data');
  const nodeArgs = opts.bin
    ? []
    : [...(run === 'tsx' ? ['--import', 'tsx'] : []), '--expose-gc', '--import', './bench/probe.js'];
  if (opts.cpuProfDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`, '--cpu-prof-interval=250');
  // BENCH_AGENTD_ARGS adds command-line flags to every agentd under test (e.g. "--inspect").
  const extraArgs = process.env.BENCH_AGENTD_ARGS?.split(' ').filter(Boolean) ?? [];
  const workers = opts.workers ?? 1;
  let ready = 0;
  const workerArgs = workers > 1 ? ['--workers', String(workers)] : [];
  const { child, value } = await spawnNode(
    'agentd',
    script,
    ['--agent', join('bench/agents', opts.agent ?? 'bench.yml'), '--web-port', '0', ...workerArgs, ...extraArgs],
    {
      nodeArgs,
      ipc: !opts.bin,
      cpus: opts.cpus,
      env: { BENCH_MODEL_URL: opts.modelUrl, BENCH_DATA_DIR: dataDir, ...opts.env },
      ready: (line) => {
        listening ??= /"port":(\d+).*listening on/.exec(line)?.[1];
        if (line.includes('"agent ready"')) ready++;
        return ready === workers ? (listening ?? '') : undefined;
      },
      timeoutMs: 30_000,
    },
  );
  if (!value) throw new Error(`agentd did not report its port (log: ${child.logFile})`);
  const port = Number(value);
  const engine = await healthEngine(port).catch(() => undefined);
  noteRuntime(run, engine);
  let nextId = 1;
  const ask = <T>(op: string, extra: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((res, rej) => {
      if (opts.bin) return rej(new Error(`probe ${op}: agentd runs as bin/agentd.js, without the probe`));
      const id = nextId++;
      const timer = setTimeout(() => {
        child.proc.off('message', onMessage);
        rej(new Error(`probe ${op} timed out`));
      }, 30_000);
      const onMessage = (m: { id: number } & T) => {
        if (m.id !== id) return;
        clearTimeout(timer);
        child.proc.off('message', onMessage);
        res(m);
      };
      child.proc.on('message', onMessage);
      child.proc.send({ id, op, ...extra });
    });
  return {
    ...child,
    port,
    engine,
    dataDir,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/`,
    stats: () => ask<ProbeStats>('stats'),
    clockUs: async () => (await ask<{ us: number }>('clock')).us,
    heapSnapshot: async (path) => void (await ask<{ path: string }>('snapshot', { path })),
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
  /** Zeroes the server's command counts. */
  resetStats(): void;
  /** Calls by command name since `resetStats` (INFO commandstats: the calls scripts make count too). */
  commandCalls(): Record<string, number>;
  stop(): Promise<void>;
}

/**
 * A private redis-server on a free loopback port (no persistence: the benchmark measures agentd, and
 * its notes say what AOF adds), killed with the other children; `cpus`: taskset -c.
 */
export async function startRedisServer(cpus?: string): Promise<RedisProcess> {
  const port = await freePort();
  const argv = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const proc = spawn(...onCpus(argv, cpus), { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = track(proc);
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(
      () => rej(new Error('redis-server did not start (is it installed? apt-get install -y redis-server)')),
      10_000,
    );
    proc.once('error', (err) => rej(new Error(`redis-server: ${err.message} (apt-get install -y redis-server)`)));
    proc.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        res();
      }
    });
  });
  const cli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: proc.pid!,
    resetStats: () => void cli('CONFIG', 'RESETSTAT'),
    commandCalls: () =>
      Object.fromEntries(
        [...cli('INFO', 'commandstats').matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)]
          .filter(([, name]) => !['config|resetstat', 'info'].includes(name!))
          .map(([, name, calls]) => [name!, Number(calls)]),
      ),
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** Busy CPU of the whole machine (all cores, all processes), ms. */
export function machineBusyMs(): number {
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
