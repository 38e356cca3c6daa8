/**
 * The AG-UI example's one command (`npm run example:ag-ui`, tools/ag-ui-example/main.ts) as a process:
 * it starts the simulator, agentd and the page on free ports and prints the page's address; SIGTERM
 * stops all three; when one of them dies the launcher stops the others and exits 1; and killed with
 * SIGKILL (so it can stop nothing) it still leaves no process behind. The page in a browser:
 * test/browser/ag-ui-example.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FIRST_START_MS, startExample } from '../support/copilotkit-example.ts';
import { stillRunning } from '../support/processes.ts';
import { PATIENT } from '../support/wait.ts';

/** What the launcher's processes are, by their command lines. */
const ROLES = {
  simulator: 'tools/simulator/main.ts',
  agentd: 'bin/agentd.js',
  toolServer: 'server-everything',
  page: 'vite/bin/vite.js',
};

describe.runIf(process.platform === 'linux')('the AG-UI example launcher', () => {
  it(
    'serves the page and agentd where it says; SIGTERM stops all three, leaving no process',
    async () => {
      const example = await startExample();
      const started = example.processes();
      for (const command of Object.values(ROLES)) expect(started.map((p) => p.cmd).join('\n')).toContain(command);

      const page = await fetch(example.pageUrl);
      expect(await page.text()).toContain('<div id="root">');
      // agentd allows the page's origin (CORS) and answers its health probe.
      const health = await fetch(`${example.agentdUrl}/api/health/live`, {
        headers: { Origin: new URL(example.pageUrl).origin },
      });
      expect(health.status).toBe(200);
      expect(health.headers.get('access-control-allow-origin')).toBe(new URL(example.pageUrl).origin);

      example.child.kill('SIGTERM');
      expect(await example.exited, example.output()).toBe(0);
      await expect.poll(() => stillRunning(started), PATIENT).toEqual([]);
    },
    FIRST_START_MS,
  );

  it(
    'when agentd dies, the launcher stops the simulator and the page and exits 1, naming it',
    async () => {
      const example = await startExample();
      const started = example.processes();
      const agentd = started.find((p) => p.cmd.includes(ROLES.agentd))!;
      process.kill(agentd.pid, 'SIGKILL');
      expect(await example.exited, example.output()).toBe(1);
      expect(example.output()).toContain('[launcher] agentd exited (SIGKILL): stopping the others');
      await expect.poll(() => stillRunning(started), PATIENT).toEqual([]);
    },
    FIRST_START_MS,
  );

  it(
    'killed with SIGKILL, the launcher leaves no process behind: each of its children stops itself',
    async () => {
      const example = await startExample();
      const started = example.processes();
      example.child.kill('SIGKILL');
      await example.exited;
      await expect.poll(() => stillRunning(started), PATIENT).toEqual([]);
    },
    FIRST_START_MS,
  );
});
