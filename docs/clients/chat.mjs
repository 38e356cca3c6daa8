// A minimal agentd client, on the package's own client (agentd-server/client, docs/client.md): sends one message,
// prints the reply as it streams and each tool call, exits 0 on the reply and 1 on an error. Runs from any folder on
// Node 20, 22 and 24 (it imports the package it ships in; on Node 20 the client uses the package's `ws`).
//
//   node docs/clients/chat.mjs "Hello"                              # http://127.0.0.1:3001, session `default`
//   AGENTD_URL=http://host:3001 AGENTD_API_KEY=... AGENTD_SESSION=work node docs/clients/chat.mjs "Hello"
import { AgentdClient } from 'agentd-server/client';

const baseUrl = (process.env.AGENTD_URL ?? 'http://127.0.0.1:3001').replace(/^ws/, 'http'); // ws:// works too
const apiKey = process.env.AGENTD_API_KEY;
const client = new AgentdClient({ baseUrl, ...(apiKey && { apiKey }) });
const message = process.argv.slice(2).join(' ') || 'Hello';

try {
  for await (const frame of client.chat(process.env.AGENTD_SESSION ?? 'default', message)) {
    if (frame.event === 'chunk') process.stdout.write(frame.data.content);
    if (frame.event === 'toolCall')
      process.stdout.write(`\n[calling ${frame.data.toolName} on ${frame.data.serverId}]\n`);
  }
  process.stdout.write('\n');
} catch (err) {
  process.stdout.write(`\nerror ${err.code ?? ''}: ${err.message}\n`);
  process.exitCode = 1;
}
