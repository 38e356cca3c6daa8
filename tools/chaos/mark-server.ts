/**
 * The chaos run's MCP tool server (stdio, `@modelcontextprotocol/server`), one per agentd instance, all writing the
 * same files. Its tools leave evidence of every run:
 * - `mark {key, ms?}`: NOT safe to repeat (no annotation). Appends the line `<key>` to MARKER_FILE as it starts, then
 *   takes `ms` (a call in flight while its agentd is paused or killed). A key is unique per call the load asked for,
 *   so two lines of one key mean the call ran twice.
 * - `mark_ask {key, ms?}`: the same, under a tool policy that asks for approval first (agent-file.ts).
 * - `stamp {key, ms?}`: idempotent (`idempotentHint`), so a resumed turn may run it again; appends `<key>` to
 *   STAMP_FILE (not checked: repeats are allowed).
 * Exits when its stdin ends (its agentd is gone).
 */
import { appendFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const markerFile = process.env['MARKER_FILE'];
const stampFile = process.env['STAMP_FILE'];
if (!markerFile || !stampFile) throw new Error('mark-server: MARKER_FILE and STAMP_FILE must be set');

const input = {
  type: 'object' as const,
  properties: {
    key: { type: 'string', description: 'Unique key of this call' },
    ms: { type: 'number', description: 'How long the call takes, in ms' },
  },
  required: ['key'],
};

const TOOLS = [
  { name: 'mark', description: 'Records one run (not safe to repeat)', inputSchema: input },
  { name: 'mark_ask', description: 'Records one run, after approval (not safe to repeat)', inputSchema: input },
  {
    name: 'stamp',
    description: 'Records a run (safe to repeat)',
    inputSchema: input,
    annotations: { idempotentHint: true },
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

serveStdio(() => {
  const server = new Server({ name: 'chaos-marks', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: TOOLS }));
  server.setRequestHandler('tools/call', async (request) => {
    const args = request.params.arguments ?? {};
    const key = typeof args['key'] === 'string' ? args['key'] : '';
    const ms = typeof args['ms'] === 'number' ? Math.min(args['ms'], 10_000) : 0;
    appendFileSync(request.params.name === 'stamp' ? stampFile : markerFile, `${key}\n`);
    if (ms > 0) await sleep(ms);
    return { content: [{ type: 'text', text: `${request.params.name} ${key} done` }] };
  });
  return server;
});

process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
