/**
 * Process entry of the model simulator: `tsx tools/simulator/main.ts --port 4010`.
 * Prints `simulator listening on <base URL>` once ready and stops on SIGINT/SIGTERM.
 */
import { CliArgsError, parseSimulatorArgs, USAGE_TEXT } from './cli-args.ts';
import { startSimulator } from './server.ts';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseSimulatorArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof CliArgsError)) throw e;
    process.stderr.write(`${e.message}\n${USAGE_TEXT}\n`);
    process.exitCode = 2;
    return;
  }
  if (parsed.help) {
    process.stdout.write(`${USAGE_TEXT}\n`);
    return;
  }
  const simulator = await startSimulator(parsed.options);
  process.stdout.write(`simulator listening on ${simulator.url}\n`);
  const stop = (): void => {
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`simulator failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
