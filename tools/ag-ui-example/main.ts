/**
 * `npm run example:ag-ui` (or `npm start` in examples/ag-ui-copilotkit): the CopilotKit example in one
 * command. Installs the page's packages when they are missing, then starts, each on 127.0.0.1 and on a
 * free port unless one is given (args.ts: flags, else PAGE_PORT, AGENTD_PORT, SIMULATOR_PORT):
 *   1. the model simulator (tools/simulator);
 *   2. agentd with the example's agent.yml (bin/agentd.js, the compiled service), told the simulator's
 *      URL (AGENTD_EXAMPLE_MODEL_URL) and the page's port (AGENTD_EXAMPLE_PAGE_PORT: the origin it allows);
 *   3. the page, on the example's own Vite dev server, told agentd's URL (VITE_AGENTD_URL).
 * Once all three are ready it prints `Open <page URL> in a browser.` (the line tests wait for) and each
 * one's address. Ctrl-C, SIGTERM or SIGHUP is passed on to all three; when one of them ends on its own,
 * the others are stopped too. Exits 0 after a requested stop, 1 otherwise; leaves no process behind
 * (children.ts, orphan-guard.mjs).
 */
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { LauncherArgsError, parseLauncherArgs, USAGE, type Ports } from './args.ts';
import { createChildGroup, ExitedEarlyError, type ChildGroup } from './children.ts';
import { installExample } from './install.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = `${ROOT}examples/ag-ui-copilotkit`;
const HOST = '127.0.0.1';

const write = (line: string): void => void process.stdout.write(`${line}\n`);

/** A port free now on HOST (the page's, which agentd must know before the page starts). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts the three in order, each told what it needs of those before; resolves once the page is ready. */
async function startAll(group: ChildGroup, ports: Ports): Promise<void> {
  // The simulator and agentd take a free port themselves (0) and say which; the page's is chosen here.
  const simulator = group.start({
    name: 'simulator',
    nodeArgs: ['--import', 'tsx', `${ROOT}tools/simulator/main.ts`, '--port', String(ports.simulator)],
    cwd: ROOT,
    ready: /simulator listening on (\S+)/,
  });
  const modelUrl = (await simulator.ready)[1]!;
  const pagePort = ports.page || (await freePort());
  const agentd = group.start({
    name: 'agentd',
    nodeArgs: [
      `${ROOT}bin/agentd.js`,
      '--agent',
      `${EXAMPLE}/agent.yml`,
      '--web-port',
      String(ports.agentd),
      '--log-format',
      'pretty',
    ],
    cwd: ROOT,
    env: { AGENTD_EXAMPLE_MODEL_URL: modelUrl, AGENTD_EXAMPLE_PAGE_PORT: String(pagePort) },
    ready: /listening on (http:\/\/[^\s"]+)/,
  });
  const agentdUrl = (await agentd.ready)[1]!;
  const page = group.start({
    name: 'page',
    nodeArgs: [`${EXAMPLE}/node_modules/vite/bin/vite.js`, '--host', HOST, '--port', String(pagePort), '--strictPort'],
    cwd: EXAMPLE,
    env: { VITE_AGENTD_URL: agentdUrl },
    ready: /Local:\s+(http:\/\/\S+)/,
  });
  const pageUrl = (await page.ready)[1]!;
  write(`
The AG-UI example is running:
  page        ${pageUrl}
  agentd      ${agentdUrl}  (AG-UI at ${agentdUrl}/ag-ui)
  simulator   ${modelUrl}
Open ${pageUrl} in a browser. Ctrl-C stops all three.
`);
}

function main(ports: Ports): void {
  installExample(ROOT, EXAMPLE, write);
  let ending = false;
  const end = (code: number, signal: NodeJS.Signals = 'SIGTERM'): void => {
    if (ending) return; // npm passes a terminal's Ctrl-C on as well: one stop
    ending = true;
    void group.stop(signal).then(() => process.exit(code));
  };
  const group = createChildGroup(write, (name, code, signal) => {
    write(`[launcher] ${name} exited (${signal ?? `code ${code}`}): stopping the others`);
    end(1);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      write(`[launcher] ${signal}: stopping the simulator, agentd and the page`);
      end(0, signal);
    });
  }
  process.on('SIGHUP', () => end(0));
  startAll(group, ports).catch((e: unknown) => {
    if (!(e instanceof ExitedEarlyError) && !ending) write(`[launcher] ${e instanceof Error ? e.message : String(e)}`);
    end(1);
  });
}

let parsed;
try {
  parsed = parseLauncherArgs(process.argv.slice(2), process.env);
} catch (e) {
  if (!(e instanceof LauncherArgsError)) throw e;
  process.stderr.write(`${e.message}\n${USAGE}\n`);
  process.exit(2);
}
if (parsed.help) {
  write(USAGE);
} else {
  main(parsed.ports);
}
