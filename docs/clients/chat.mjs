// A minimal agentd WebSocket client: sends one message, prints the streamed reply and tool calls,
// exits 0 on `response` and 1 on `error`.
//
//   node docs/clients/chat.mjs "Hello"                       # ws://127.0.0.1:3001/
//   AGENTD_URL=ws://host:3001/ AGENTD_API_KEY=... node docs/clients/chat.mjs "Hello"
//
// Node 22 and later have a global WebSocket; on Node 20 the `ws` package is used: run it where `ws` is
// installed, or `npm install ws` beside a copy of this file.
const url = new URL(process.env.AGENTD_URL ?? 'ws://127.0.0.1:3001/');
if (process.env.AGENTD_API_KEY) url.searchParams.set('token', process.env.AGENTD_API_KEY);
const content = process.argv.slice(2).join(' ') || 'Hello';
const WebSocketImpl = globalThis.WebSocket ?? (await import('ws').catch(needsWs)).default;

function needsWs() {
  process.stderr.write(
    `Node ${process.version} has no WebSocket built in: run \`npm install ws\` here, or use Node 22+\n`,
  );
  process.exit(1);
}

const ws = new WebSocketImpl(url);
ws.onopen = () => ws.send(JSON.stringify({ type: 'message', content }));
ws.onmessage = ({ data }) => {
  const { event, data: d } = JSON.parse(String(data));
  if (event === 'chunk') process.stdout.write(d.content);
  if (event === 'toolCall') process.stdout.write(`\n[calling ${d.toolName} on ${d.serverId}]\n`);
  if (event === 'response') finish(0, '\n');
  if (event === 'error') finish(1, `\nerror ${d.code}: ${d.message}\n`);
};
ws.onerror = () => finish(1, `cannot reach ${url.origin}${url.pathname}\n`);

function finish(code, text) {
  process.stdout.write(text);
  process.exitCode = code;
  ws.close();
}
