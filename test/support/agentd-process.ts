/**
 * agentd as users run it (`src/cli.ts`), in a child process of its own: its output, its exit code
 * and the port it logs. Run by node itself (tsx as a loader), so a signal sent to the child reaches
 * agentd, SIGKILL included. The environment holds only PATH and HOME plus `env`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface AgentdProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  out(): string;
  err(): string;
}

export function runAgentd(args: string[], env: NodeJS.ProcessEnv = {}): AgentdProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

/** Waits until the service logs its listening port. */
export async function listeningPort(p: AgentdProcess): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const m = /"port":(\d+).*"engine"/.exec(p.out());
    if (m) return Number(m[1]);
    if (p.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`service did not start:\n${p.out()}${p.err()}`);
}

/** Writes an agent config (YAML text, or an object: JSON is YAML) to a fresh temporary file; its path. */
export async function writeAgentFile(config: string | object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-agent-'));
  const file = join(dir, 'agent.yml');
  await writeFile(file, typeof config === 'string' ? config : JSON.stringify(config));
  return file;
}
