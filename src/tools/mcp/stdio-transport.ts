/**
 * MCP over a child's stdin/stdout (not the SDK's transport: it passes LOGNAME/SHELL/TERM/USER and inherits stderr).
 * - The child's env is this process's PATH and HOME plus the configured `env` (which wins), nothing else.
 * - The child leads its own process group; closing kills the group, and so does agentd's death (group-reaper.ts, else
 *   parent-death.ts). The registry (`children`) is told of the group at start, at the first answer, and at its end.
 * - `exitReason` names the cause stderr gives (stderr-cause.ts). `onclose` fires once, as soon as the child exits.
 * - `close()` ends stdin, then SIGTERM after `graceMs`, then SIGKILL after another; resolves once the child exited.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { once } from 'node:events';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  deserializeMessage,
  serializeMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { tooLargeAnswer, tooLargeMessage } from './limited-fetch.ts';
import type { ChildRegistry } from '../spawn/child-registry.ts';
import { LineReader } from './line-reader.ts';
import { groupReaper } from '../spawn/group-reaper.ts';
import { findSetpriv, withParentDeathSignal } from '../spawn/parent-death.ts';
import { stderrCause, StderrLines } from './stderr-cause.ts';
import type { Logger } from '../../log/index.ts';

export interface ChildTransportOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string | undefined;
  log: Logger;
  /** Wait between closing stdin, SIGTERM and SIGKILL. Default 500 ms. */
  graceMs?: number;
  /** Longest message read from the server; a longer one fails the call it answers. */
  maxMessageBytes: number;
  /** Told of the child's group when it starts and once it is gone. */
  children?: ChildRegistry | undefined;
}

const INHERITED =
  process.platform === 'win32' ? ['PATH', 'SYSTEMROOT', 'USERPROFILE', 'APPDATA', 'TEMP'] : ['PATH', 'HOME'];
/**
 * How long an exited server's last stderr lines are waited for (its pipe's end; a grandchild still holding the pipe
 * delays the close this long at most). 200 ms lost the cause on a loaded machine (stress-ng on both cores).
 */
const STDERR_GRACE_MS = 2_000;

function childEnv(configured: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...configured };
}

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private readonly reader: LineReader;
  private readonly stderr = new StderrLines();
  private partialLine = '';
  private closedNotified = false;
  private answered = false;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null; ours: boolean } | undefined;
  private spawnError: Error | undefined;
  /** Set once close() began: an exit after that is ours, not the server's failure. */
  private closing = false;

  constructor(private readonly options: ChildTransportOptions) {
    this.reader = new LineReader(
      options.maxMessageBytes,
      (line) => this.onLine(line),
      (id, bytes) => this.onOversize(id, bytes),
    );
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Why the child went away on its own (`process exited with code 1: Error: …`); else undefined. For admins: stderr. */
  get exitReason(): string | undefined {
    const status = this.exitStatus;
    if (status === undefined || this.spawnError) return status;
    const cause = stderrCause([...this.stderr.lines(), this.partialLine]);
    return cause ? `${status}: ${cause}` : status;
  }

  /** How the child went away on its own (`process exited with code 1`), without what its stderr said; else undefined. */
  get exitStatus(): string | undefined {
    if (this.spawnError) return `cannot start ${this.options.command}: ${this.spawnError.message}`;
    if (!this.exitInfo || this.exitInfo.ours) return undefined;
    const { code, signal } = this.exitInfo;
    return `process ${signal ? `killed by ${signal}` : `exited with code ${code}`}`;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('transport already started'));
    const { command, args, env, cwd } = this.options;
    return new Promise((resolve, reject) => {
      const childEnvironment = childEnv(env);
      const reaper = groupReaper();
      const reaped = reaper?.start() ?? false;
      const run = reaped
        ? { command, args }
        : withParentDeathSignal({ command, args }, childEnvironment.PATH, cwd, findSetpriv());
      const child = spawn(run.command, run.args, {
        env: childEnvironment,
        ...(cwd !== undefined ? { cwd } : {}),
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
        windowsHide: true,
      });
      this.child = child;
      if (child.pid !== undefined) {
        reaper?.watch(child.pid); // first: nothing between the spawn and this line may yield
        this.options.children?.add(child.pid, command);
        const pid = child.pid;
        child.once('exit', () => reaper?.unwatch(pid));
      }
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('spawn', () => resolve());
      child.on('error', (error) => {
        if (child.pid === undefined) {
          this.spawnError = error;
          this.exitInfo = { code: null, signal: null, ours: false };
          reject(error);
          this.notifyClosed();
        } else this.onerror?.(error);
      });
      child.once('exit', (code, signal) => {
        // Ours unless it failed on its own (nonzero code, no signal), so a failed connect still names its cause.
        this.exitInfo = { code, signal, ours: this.closing && (signal !== null || code === 0) };
        this.options.log.debug({ code, signal }, 'stdio server exited');
        // The last stderr lines may be in the pipe still; a grandchild holding it delays STDERR_GRACE_MS at most.
        const stderrRead = child.stderr.readableEnded
          ? Promise.resolve()
          : Promise.race([once(child.stderr, 'end'), sleep(STDERR_GRACE_MS, undefined, { ref: false })]);
        void stderrRead.then(() => this.notifyClosed());
      });
      child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
      child.stdout.on('error', (error) => this.onerror?.(error));
      child.stdin.on('error', (error) => this.options.log.debug({ err: error }, 'stdio server stdin error'));
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => this.onStderr(text));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !stdin.writable || this.exitInfo) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    const exited = this.exited;
    if (!child || !exited) return;
    this.closing = true;
    if (!this.exitInfo && child.pid !== undefined) {
      const grace = this.options.graceMs ?? 500;
      child.stdin?.end();
      if (!(await settlesWithin(exited, grace))) {
        this.kill(child, 'SIGTERM');
        if (!(await settlesWithin(exited, grace))) {
          this.kill(child, 'SIGKILL');
          await exited;
        }
      }
    }
    // A dead leader can leave its group behind (a launcher's children); sweep it.
    this.kill(child, 'SIGKILL');
    if (child.pid !== undefined) this.options.children?.remove(child.pid);
    child.stdout?.destroy();
    child.stderr?.destroy();
    child.stdin?.destroy();
    this.notifyClosed();
  }

  private kill(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      if (process.platform === 'win32') child.kill(signal);
      else process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  }

  private notifyClosed(): void {
    if (this.closedNotified) return;
    this.closedNotified = true;
    this.onclose?.();
  }

  private onStdout(chunk: Buffer): void {
    if (!this.answered && this.child?.pid !== undefined) {
      this.answered = true;
      this.options.children?.answered(this.child.pid);
    }
    this.reader.push(chunk);
  }

  private onLine(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    this.onmessage?.(message);
  }

  /** A message over the limit was skipped: the call it answers fails (the connection goes on). */
  private onOversize(id: string | number | undefined, bytes: number): void {
    const limit = this.options.maxMessageBytes;
    this.options.log.warn({ bytes, limit }, 'stdio server: message over maxResultBytes skipped');
    if (id === undefined) return void this.onerror?.(new Error(tooLargeMessage(bytes, limit)));
    this.onmessage?.(tooLargeAnswer(id, bytes, limit));
  }

  private onStderr(text: string): void {
    const lines = (this.partialLine + text).split('\n');
    this.partialLine = lines.pop() ?? '';
    for (const raw of lines) {
      const line = raw.trimEnd();
      if (!line) continue;
      this.options.log.debug({ stderr: line }, 'stdio server stderr');
      this.stderr.push(line);
    }
    if (this.partialLine.length > 4096) this.partialLine = this.partialLine.slice(-4096);
  }
}

/** Whether `promise` settles within `ms` (the timer is cleared as soon as it does). */
async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  const timer = new AbortController();
  const settled = await Promise.race([
    promise.then(() => true),
    sleep(ms, false, { signal: timer.signal }).catch(() => false),
  ]);
  timer.abort();
  return settled;
}
