/**
 * Run inside a network namespace that has only loopback (test/int/ssrf-netns.test.ts): starts
 * agentd in-process and asks it to connect runtime http servers at the addresses given as
 * arguments, printing one JSON line per answer. Whatever the guard does, no packet can leave.
 */
import { startApp } from './start-app.ts';

const [allowPrivate, ...urls] = process.argv.slice(2);
const svc = await startApp({
  server: { mcp: { allowPrivateNetworks: allowPrivate === 'true' } },
  storage: { type: 'memory' },
});
for (const url of urls) {
  const res = await fetch(`${svc.url}/api/connect-server`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: `probe-${urls.indexOf(url)}`, config: { type: 'http', baseUrl: url, timeout: 2000 } }),
  });
  const body = (await res.json()) as { error?: { code: string; details: Record<string, unknown> } };
  process.stdout.write(
    `${JSON.stringify({ url, status: res.status, code: body.error?.code, details: body.error?.details })}\n`,
  );
}
await svc.stop();
