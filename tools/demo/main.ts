/**
 * `npm run demo`: the service with no API key. Starts the model simulator (port 4010, or a free one
 * when taken), then agentd with agents/demo.yml (real MCP servers: filesystem over data/demo-sandbox,
 * memory), runs a short scripted WebSocket conversation that shows streaming and tool calls, then a
 * second one against a model with a small context window (the simulator's `[[window:N]]`) that shows
 * a compaction (the overflow is compacted away and the turn answered), prints how to talk to it,
 * and runs until Ctrl-C.
 *
 * Environment: AGENTD_DEMO_PORT (service port, default 3001; 0 = any free port), AGENTD_DEMO_SIM_PORT
 * (simulator port, default 4010), AGENTD_DEMO_TOKENS_PER_SEC (simulated streaming speed, default 40),
 * AGENTD_DEMO_LOG (service log level, default warn; readable lines, not JSON), AGENTD_DEMO_EXIT=1 (exit 0 after the scripted
 * conversation, for tests and CI), AGENTD_DEMO_DATA (data folder holding demo-sandbox and the memory
 * file, default <os temp dir>/agentd-demo). Sets AGENTD_DEMO_MODEL_URL, AGENTD_DEMO_DATA and
 * AGENTD_DEMO_SERVERS (the installed @modelcontextprotocol folder) for demo.yml. Runs the same from a
 * checkout (`npm run demo`) and from the installed package (`agentd demo`), from any folder.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import WebSocket from 'ws';
import { createApp, type App } from '../../src/app.ts';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { createLogger, logDestination, LOG_LEVELS } from '../../src/log/index.ts';
import { packagePath } from '../../src/package-info.ts';
import { startSimulator, type Simulator } from '../simulator/index.ts';
import { bold, createTurnPrinter, cyan, dim, type Frame } from './print.ts';

const SESSION = 'demo';
/** The session of the small-window conversation. */
const WINDOW_SESSION = 'demo-window';
/** Tokens the small window leaves for the conversation beyond the first request (tools and system prompt). */
const WINDOW_ROOM = 250;

/** The scripted conversation. `[[...]]` directives tell the simulated model what to do (tools/simulator/README.md). */
const SCRIPT = [
  'Hello! Who are you? [[reply:Hi! I am the agentd demo agent. My model is a simulator, so I need no API key, but every word you read is streamed through the real service, chunk by chunk.]]',
  'What is in the sandbox? [[tool:list_directory {"path":"."}]]',
  'Read the welcome note. [[tool:read_text_file {"path":"welcome.txt"}]]',
  'Remember that I tried agentd today. [[tool:create_entities {"entities":[{"name":"demo-user","entityType":"person","observations":["tried agentd"]}]}]]',
];

const WELCOME = `Welcome to the agentd demo sandbox.
The filesystem MCP server can read and write only inside this folder.
Ask the agent to list, read or write files here.
`;

function envInt(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new Error(`${name} must be a non-negative integer, got "${text}"`);
  return n;
}

async function startSim(port: number, tokensPerSec: number): Promise<Simulator> {
  const options = { tokensPerSec, ttftMs: tokensPerSec > 0 ? 150 : 0, record: false };
  try {
    return await startSimulator({ ...options, port });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw e;
    process.stdout.write(dim(`port ${port} is taken; the simulator takes a free port instead\n`));
    return startSimulator({ ...options, port: 0 });
  }
}

async function listen(app: App, port: number): Promise<number> {
  try {
    return await app.frontEnd.listen('127.0.0.1', port);
  } catch (e) {
    if (port === 0) throw e;
    process.stdout.write(dim(`port ${port} is taken; agentd takes a free port instead\n`));
    return app.frontEnd.listen('127.0.0.1', 0);
  }
}

function connect(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Sends each scripted message (a function: made from the turn before's end frame) to `session` and prints its turns' events as they stream in. */
async function converse(
  ws: WebSocket,
  session: string,
  script: readonly (string | ((last: Frame | undefined) => string))[],
): Promise<void> {
  const printer = createTurnPrinter();
  let endTurn: ((f: Frame) => void) | undefined;
  const onMessage = (raw: Buffer) => {
    const f = JSON.parse(raw.toString('utf8')) as Frame;
    if (f.data.sessionId !== session) return; // server-wide events (mcpServerStatus, ...) and other sessions
    if (printer.frame(f)) endTurn?.(f);
  };
  ws.on('message', onMessage);
  let last: Frame | undefined;
  for (const item of script) {
    const content = typeof item === 'string' ? item : item(last);
    process.stdout.write(`\n${bold(cyan('you   ›'))} ${content}\n`);
    const ended = new Promise<Frame>((resolve) => (endTurn = resolve));
    ws.send(JSON.stringify({ type: 'message', sessionId: session, content }));
    last = await ended;
  }
  ws.off('message', onMessage);
}

/**
 * The small-window conversation: the first turn's usage says how big the request is (system prompt
 * and tools); every later message gives the model a window WINDOW_ROOM tokens above that, so the
 * fourth turn overflows and agentd compacts (a `[contextCompacted]` line) before answering it.
 */
function windowScript(): ((last: Frame | undefined) => string)[] {
  let window = 0;
  const next = (text: string) => (last: Frame | undefined) => {
    const usage = last?.data.usage as { promptTokens?: number } | undefined;
    if (window === 0) window = (usage?.promptTokens ?? 1000) + WINDOW_ROOM;
    return `${text} [[window:${window}]] [[len:50]]`;
  };
  return [
    () => 'Now imagine my model has a small context window. Tell me a story. [[len:50]]',
    next('Go on.'),
    next('And then?'),
    next('What happened next?'),
    next('How does it end?'),
  ];
}

function examples(base: string, ws: string): string {
  const chat = packagePath('docs', 'clients', 'chat.mjs');
  const quoted = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
  const json = (message: string) => quoted(JSON.stringify({ message }));
  return `
${bold('Try it yourself')} (the simulator echoes you, and obeys [[directives]]: see ${packagePath('tools', 'simulator', 'README.md')})

  Open ${base}/ in a browser: the web console

  curl -s ${base}/api/message-sync -H 'Content-Type: application/json' -d ${json('Hello there')}
  curl -s ${base}/api/message-sync -H 'Content-Type: application/json' -d ${json('List files [[tool:list_directory {"path":"."}]]')}
  curl -s ${base}/api/message -H 'Content-Type: application/json' -d ${json('Stream me [[len:40]]')}   # reply goes to WebSocket clients
  curl -s -X POST ${base}/api/reset
  curl -s ${base}/api/sessions
  curl -s ${base}/api/sessions/${SESSION}/history
  curl -s -X POST ${base}/api/sessions/${SESSION}/compact      # compact a session's history now
  curl -s ${base}/api/mcp/servers
  curl -s ${base}/api/health

  AGENTD_URL=${ws} node ${chat} ${quoted('Hello [[len:30]]')}
  AGENTD_URL=${ws} node ${chat} ${quoted('What do you remember? [[tool:read_graph]]')}

Your own agent: agentd init (writes agent.yml), set your model's key, then agentd
`;
}

async function main(): Promise<void> {
  const data = resolve(process.env.AGENTD_DEMO_DATA || join(tmpdir(), 'agentd-demo'));
  // The demo's tool servers, wherever npm put them (nested in a global install, hoisted by npx).
  const servers = dirname(
    dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json')),
  );
  const exitAfterScript = process.env.AGENTD_DEMO_EXIT === '1';
  const servicePort = envInt('AGENTD_DEMO_PORT', 3001);
  const tokensPerSec = envInt('AGENTD_DEMO_TOKENS_PER_SEC', 40);
  const level = process.env.AGENTD_DEMO_LOG ?? 'warn';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new Error(`AGENTD_DEMO_LOG must be one of ${LOG_LEVELS.join(', ')}`);

  await mkdir(join(data, 'demo-sandbox'), { recursive: true });
  await writeFile(join(data, 'demo-sandbox', 'welcome.txt'), WELCOME);

  const sim = await startSim(envInt('AGENTD_DEMO_SIM_PORT', 4010), tokensPerSec);
  process.env.AGENTD_DEMO_MODEL_URL = sim.url;
  process.env.AGENTD_DEMO_DATA = data;
  process.env.AGENTD_DEMO_SERVERS = servers;

  let app: App | undefined;
  let ws: WebSocket | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      ws?.close();
      await app?.stop();
      await sim.close();
    })());
  const onSignal = () => {
    if (stopping) process.exit(1); // second Ctrl-C
    process.stdout.write(dim('\nstopping the demo…\n'));
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`demo: shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const config = await loadConfig(packagePath('agents', 'demo.yml'));
    // The service's log lines, between the demo's own, as readable lines rather than JSON.
    const log = createLogger(level as (typeof LOG_LEVELS)[number], await logDestination('pretty', 1));
    app = createApp(config, { log });
    const port = await listen(app, servicePort);
    process.stdout.write(
      `${bold('agentd demo')}\n  model simulator  ${sim.url}\n  agentd           http://127.0.0.1:${port}  (REST /api, WebSocket /)\n`,
    );
    process.stdout.write(dim(`  starting MCP servers: filesystem (${join(data, 'demo-sandbox')}), memory…\n`));
    await app.start();
    const servers = await app.bus.execute('mcp.listServers', {});
    for (const s of servers)
      process.stdout.write(`  MCP server       ${s.name}: ${s.status}${s.error ? ` (${s.error})` : ''}\n`);

    ws = await connect(`ws://127.0.0.1:${port}/`);
    await converse(ws, SESSION, SCRIPT);
    process.stdout.write(
      `\n${bold('A small context window')} ${dim(`(session ${WINDOW_SESSION}: the history is compacted, not cut off)`)}\n`,
    );
    await converse(ws, WINDOW_SESSION, windowScript());
    process.stdout.write(examples(`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}/`));
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }

  if (exitAfterScript) {
    await stop();
    process.stdout.write(dim('demo finished (AGENTD_DEMO_EXIT=1)\n'));
    process.exit(0);
  }
  process.stdout.write(`\n${bold('Running.')} Press Ctrl-C to stop.\n`);
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : ((err as Error).stack ?? String(err));
  process.stderr.write(`demo failed: ${message}\n`);
  process.exit(1);
});
