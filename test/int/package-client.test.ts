/**
 * `agentd-server/client` as users get it: from the installed tarball (test/support/installed-package.ts), a module in
 * a folder outside the checkout imports it (ESM, on whichever Node runs the suite), TypeScript checks a script
 * against its declarations (typed answers, frames narrowed by `event`, a body of the wrong type refused), and the
 * README's snippet runs as the README says: in a fresh `npm init -y` project that linked the package, saved under the
 * name the README gives, against a real server.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../tools/simulator/index.ts';
import { installed, runCommand, scratch } from '../support/installed-package.ts';
import { ROOT } from '../support/paths.ts';
import { startApp } from '../support/start-app.ts';

const run = promisify(execFile);
const INSTALL_MS = 600_000;
beforeAll(() => installed(), INSTALL_MS);

const SCRIPT = `import { AgentdClient, type Frame, type RouteAnswer } from 'agentd-server/client';
const client = new AgentdClient({ baseUrl: 'http://127.0.0.1:9' });
export const version = async (): Promise<string> => (await client.api.health()).version;
export const shown = (f: Frame): string => (f.event === 'chunk' ? f.data.content : f.event === 'toolCall' ? f.data.toolName : '');
export const listed = (a: RouteAnswer<'listSchedules'>) => a.schedules.map((s) => s.id);
// @ts-expect-error a message must be a string
void client.api.messageSync({ body: { message: 42 } });
`;

describe('agentd-server/client from the installed package', () => {
  let dir: string;
  beforeAll(async () => {
    const { prefix } = await installed();
    dir = await scratch('client-consumer');
    await mkdir(dir, { recursive: true });
    await symlink(join(prefix, 'lib', 'node_modules'), join(dir, 'node_modules'));
  });

  it('imports in a folder of its own', async () => {
    const code =
      "const m = await import('agentd-server/client'); console.log(typeof m.AgentdClient, typeof m.verifyWebhook);";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: dir });
    expect(stdout.trim()).toBe('function function');
  });

  it('has declarations TypeScript checks a script against', async () => {
    await writeFile(join(dir, 'use.mts'), SCRIPT);
    const compilerOptions = {
      module: 'nodenext',
      target: 'es2022',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    };
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['use.mts'] }));
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', dir]).then(
      () => '',
      (e: { stdout?: string; message?: string }) => e.stdout ?? e.message ?? 'failed',
    );
    expect(result).toBe('');
  });

  it("runs the README's snippet as written, in a fresh npm init -y project", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const snippet = /```js\n(import \{ AgentdClient \} from 'agentd-server\/client';\n[^`]*)```/.exec(readme)?.[1];
    const file = /save this as `([\w.-]+)`/.exec(readme)?.[1];
    expect(snippet, 'the js block that imports agentd-server/client').toBeDefined();
    expect(file, 'the name the README saves it under').toMatch(/\.mjs$/);
    const { prefix, env } = await installed();
    const project = await scratch('readme-snippet');
    const npm = (...args: string[]) =>
      runCommand(args, env, { cwd: project, command: 'npm', env: { npm_config_prefix: prefix } });
    expect((await npm('init', '-y')).code).toBe(0);
    const linked = await npm('link', 'agentd-server', '--no-audit', '--no-fund', '--prefer-offline');
    expect(linked.code, linked.err).toBe(0);
    const sim = await startSimulator();
    const svc = await startApp({}, { modelUrl: sim.url });
    try {
      await writeFile(join(project, file!), snippet!.replace('http://127.0.0.1:3001', svc.url));
      const ran = await runCommand([file!], env, { cwd: project, command: process.execPath });
      expect(ran).toEqual({ code: 0, out: 'You said: Hello', err: '' });
    } finally {
      await svc.stop();
      await sim.close();
    }
  });
});
