/**
 * `agentd [options]`: serves the agent in this process, or supervises `--workers N` processes that do.
 * The agent file is read and validated before anything heavy is imported, so a config error answers at once.
 */
import cluster from 'node:cluster';
import type { ServeOptions } from './args.ts';
import { agentFileOrExit, loadConfigOrExit } from './start-up.ts';

export async function serve(options: ServeOptions): Promise<void> {
  const agentFile = agentFileOrExit(options);
  if (options.workers > 1 && cluster.isPrimary) return (await import('./supervise.ts')).supervise(options, agentFile);
  const { config, storage } = await loadConfigOrExit(agentFile);
  return (await import('./run.ts')).run(options, agentFile, config, storage);
}
