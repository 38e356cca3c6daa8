/**
 * Reporter: at the end of a run, the slowest test files with their wall time, so a file that grew slow shows in
 * every run's last lines (and can move to the slow tier, `npm run test:slow`: vitest.config.ts). A file's time is
 * what vitest measured for it in its worker: importing it (with what its worker had not loaded yet), setting it up
 * and running its tests and hooks. Runs of one or two files print nothing. AGENTD_TEST_SLOWEST sets how many (0: none).
 */
import type { Reporter, TestModule } from 'vitest/node';

const DEFAULT_COUNT = 10;

/** A file's wall time in its worker, in milliseconds. */
export function fileMs(module: TestModule): number {
  const d = module.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
}

/** The lines printed for `modules`: the `count` slowest, longest first, with the project's name. */
export function slowestLines(modules: readonly TestModule[], count: number, root: string): string[] {
  if (count <= 0 || modules.length < 3) return [];
  const rows = modules
    .map((m) => ({
      ms: fileMs(m),
      name: m.moduleId.startsWith(root) ? m.moduleId.slice(root.length + 1) : m.moduleId,
      m,
    }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count);
  const total = modules.reduce((sum, m) => sum + fileMs(m), 0);
  return [
    `Slowest ${rows.length} of ${modules.length} test files (${(total / 1000).toFixed(0)} s summed over files):`,
    ...rows.map(({ ms, name, m }) => {
      const failed = m.state() === 'failed' ? '  (failed)' : '';
      return `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${name}  [${m.project.name}]${failed}`;
    }),
  ];
}

export default class SlowestFiles implements Reporter {
  private root = process.cwd();

  onInit(ctx: { config: { root: string } }): void {
    this.root = ctx.config.root;
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const count = Number(process.env.AGENTD_TEST_SLOWEST ?? DEFAULT_COUNT);
    const lines = slowestLines(modules, Number.isFinite(count) ? count : DEFAULT_COUNT, this.root);
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}
