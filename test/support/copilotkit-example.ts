/**
 * The CopilotKit example page (examples/ag-ui-copilotkit) as its README runs it: installed from its own
 * lock file when missing (`npm run example:install`), built by Vite when its sources are newer than its
 * build, and served by Vite's preview server (`npm run preview`) on a free port.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './paths.ts';

export const EXAMPLE = join(ROOT, 'examples', 'ag-ui-copilotkit');
export const EXAMPLE_AGENT = join(EXAMPLE, 'agent.yml');

const INSTALLED = join(EXAMPLE, 'node_modules', '.package-lock.json');
const BUILT = join(EXAMPLE, 'dist', 'index.html');
const SOURCES = ['index.html', 'vite.config.ts', 'package-lock.json', 'src'];

/** Installs the example when its install is missing or older than its lock file, then builds it when stale. */
export async function buildExample(): Promise<void> {
  if (olderThan(INSTALLED, [join(EXAMPLE, 'package-lock.json')])) {
    await run('npm', ['run', '-s', 'example:install'], ROOT);
  }
  if (
    olderThan(
      BUILT,
      SOURCES.map((p) => join(EXAMPLE, p)),
    )
  ) {
    await run(
      process.execPath,
      [join(EXAMPLE, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'],
      EXAMPLE,
    );
  }
}

export interface ServedPage {
  /** `http://127.0.0.1:<port>` (no trailing slash): the page's origin. */
  origin: string;
  close(): Promise<void>;
}

/** The built page served by the example's own Vite (`vite preview`), on a free loopback port. */
export async function servePage(): Promise<ServedPage> {
  const vite = await import(pathToFileURL(join(EXAMPLE, 'node_modules', 'vite', 'dist', 'node', 'index.js')).href);
  const server = await vite.preview({
    root: EXAMPLE,
    logLevel: 'warn',
    preview: { host: '127.0.0.1', port: 0, strictPort: false },
  });
  const { port } = server.httpServer.address() as { port: number };
  return { origin: `http://127.0.0.1:${port}`, close: () => server.close() };
}

/** True when `target` is missing or older than the newest file under `sources`. */
function olderThan(target: string, sources: string[]): boolean {
  if (!existsSync(target)) return true;
  const built = statSync(target).mtimeMs;
  return sources.some((p) => newest(p) > built);
}

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${code}`)),
    );
  });
}
