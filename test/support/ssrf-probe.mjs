/**
 * Run inside a network namespace that has only loopback (test/int/ssrf-netns.test.ts): starts
 * agentd in-process and asks it to connect runtime http servers at the addresses given as
 * arguments, printing one JSON line per answer. Whatever the guard does, no packet can leave.
 *
 * Plain JavaScript on the compiled modules (dist/ is current before any test: test/support/built-dist.ts), so each
 * probe starts in a fraction of what transpiling the sources under tsx took.
 */
import { pino } from 'pino';
import { createApp } from '../../dist/src/app.js';
import { parseConfig } from '../../dist/src/config/index.js';

const [allowPrivate, ...urls] = process.argv.slice(2);
const config = parseConfig({
  storage: { type: 'memory' },
  server: { mcp: { allowPrivateNetworks: allowPrivate === 'true' } },
  llm: { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'sim-model', apiKey: 'test-key' },
});
const app = createApp(config, { log: pino({ level: 'silent' }) });
await app.open();
const port = await app.frontEnd.listen('127.0.0.1', 0);
await app.start();
for (const [i, url] of urls.entries()) {
  const res = await fetch(`http://127.0.0.1:${port}/api/connect-server`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: `probe-${i}`, config: { type: 'http', baseUrl: url, timeout: 2000 } }),
  });
  const body = await res.json();
  process.stdout.write(
    `${JSON.stringify({ url, status: res.status, code: body.error?.code, details: body.error?.details })}\n`,
  );
}
await app.stop();
