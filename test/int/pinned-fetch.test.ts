/**
 * The pinned fetch of a runtime tool server (src/tools/spawn/url-policy.ts): `close()` ends its connections at
 * once, a response still streaming included. A 2026-07-28 server's `subscriptions/listen` stream never
 * ends by itself; a close that waited for it hung the server's removal and agentd's shutdown.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinnedFetch } from '../../src/egress/url-policy.ts';

describe('pinned fetch', () => {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(': open\n\n'); // and never ends
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('close() ends a response that is still streaming, and the server sees the connection go', async () => {
    const pinned = pinnedFetch([{ address: '127.0.0.1', family: 4 }]);
    const res = await pinned.fetch(`http://127.0.0.1:${port}/listen`, { method: 'POST' });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(': open\n\n');
    const gone = new Promise((resolve) => requests.at(-1)!.socket.once('close', resolve));
    await pinned.close();
    await gone;
    await expect(reader.read()).rejects.toThrow();
  });
});
