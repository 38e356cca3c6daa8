/**
 * The process entry of `agentd`: the only place that listens, reads signals, forks workers or exits.
 * `--help`, `--version` and usage errors answer before anything heavy is imported.
 * Exit codes: 0 normal shutdown, 1 start-up failure, 2 usage.
 */
import { parseCliArgs, USAGE, UsageError, type CliOptions } from './cli/args.ts';
import { VERSION } from './package-info.ts';

function parseOrExit(argv: string[]): CliOptions {
  try {
    return parseCliArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`agentd: ${e.message}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const options = parseOrExit(process.argv.slice(2));
  switch (options.command) {
    case 'help':
      return void process.stdout.write(USAGE);
    case 'version':
      return void process.stdout.write(`${VERSION}\n`);
    case 'init':
      return (await import('./cli/init.ts')).init(options);
    case 'demo':
      // bin/agentd.js runs the demo (tools/demo, shipped in the package) before this entry loads.
      process.stderr.write(
        'agentd: the demo runs from the agentd command (bin/agentd.js demo), or `npm run demo` in a checkout\n',
      );
      return process.exit(2);
    case 'serve':
      return (await import('./cli/serve.ts')).serve(options);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`agentd: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
