/**
 * Remote MCP servers through a forward proxy (issue 58, item 4): server-everything over Streamable HTTP reached
 * through a real proxy on loopback (test/support/forward-proxy.ts) by an entry's `proxy`, by `HTTP_PROXY`, and at
 * runtime (the URL policy judging the target, never the proxy); `NO_PROXY` bypasses the environment's proxy. An A2A
 * agent's `proxy` too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_RUNTIME_POLICY } from '../../src/tools/spawn/runtime-connect.ts';
import { startPeer } from '../support/a2a-peer.ts';
import { startForwardProxy, type ForwardProxy } from '../support/forward-proxy.ts';
import { startApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { harness, http, rejection, startEverythingHttp, textOf, type Harness } from './mcp-helpers.ts';

let server: Awaited<ReturnType<typeof startEverythingHttp>>;
let proxy: ForwardProxy;
let url: string;
const harnesses: Harness[] = [];
beforeAll(async () => {
  [server, proxy] = await Promise.all([startEverythingHttp('streamableHttp'), startForwardProxy()]);
  url = `http://127.0.0.1:${server.port}/mcp`;
});
afterAll(async () => {
  for (const h of harnesses) await h.stop();
  await server.stop();
  await proxy.close();
});

/**
 * What passed through the proxy while `run` ran: requests forwarded (absolute-form) and tunnels opened (undici's
 * ProxyAgent tunnels http targets through CONNECT too).
 */
async function forwardedDuring(run: () => Promise<void>): Promise<string[]> {
  const [forwarded, tunnels] = [proxy.forwarded.length, proxy.tunnels.length];
  await run();
  return [...proxy.forwarded.slice(forwarded), ...proxy.tunnels.slice(tunnels).map((t) => `CONNECT ${t}`)];
}

/** Starts a service with `remote` as its one server; calls `echo` on it. */
async function connectAndCall(...args: Parameters<typeof harness>): Promise<void> {
  const h = harness(...args);
  harnesses.push(h);
  await h.service.start();
  const result = await h.bus.execute('mcp.executeTool', {
    serverId: 'remote',
    toolName: 'echo',
    args: { message: 'hi' },
  });
  expect(textOf(result.data)).toBe('Echo: hi');
}

describe('remote MCP servers through a forward proxy', () => {
  it("connects through an entry's proxy, and through HTTP_PROXY", async () => {
    const own = await forwardedDuring(() => connectAndCall({ remote: http(url, { proxy: proxy.url }) }, { env: {} }));
    expect(own.length).toBeGreaterThanOrEqual(1);
    expect(own.every((line) => line === `CONNECT 127.0.0.1:${server.port}`)).toBe(true);
    const fromEnv = await forwardedDuring(() =>
      connectAndCall({ remote: http(url) }, { env: { HTTP_PROXY: proxy.url } }),
    );
    expect(fromEnv.length).toBeGreaterThanOrEqual(1);
  });

  it('goes straight to the server when NO_PROXY names it, or its entry says proxy: false', async () => {
    const env = { HTTP_PROXY: proxy.url, NO_PROXY: `127.0.0.1:${server.port}` };
    expect(await forwardedDuring(() => connectAndCall({ remote: http(url) }, { env }))).toEqual([]);
    const off = { HTTP_PROXY: proxy.url };
    expect(await forwardedDuring(() => connectAndCall({ remote: http(url, { proxy: false }) }, { env: off }))).toEqual(
      [],
    );
  });

  it('connects a runtime server through the proxy, the URL policy judging the target and not the loopback proxy', async () => {
    const h = harness({}, { runtime: { ...OPEN_RUNTIME_POLICY, env: { HTTP_PROXY: proxy.url } } });
    harnesses.push(h);
    await h.service.start();
    const forwarded = await forwardedDuring(async () => {
      await h.bus.execute('mcp.connectServer', { name: 'late', config: http(url) });
    });
    expect(forwarded.length).toBeGreaterThanOrEqual(1);

    const strict = harness(
      {},
      { runtime: { runtimeConnect: true, allowPrivateNetworks: false, env: { HTTP_PROXY: proxy.url } } },
    );
    harnesses.push(strict);
    await strict.service.start();
    const refused = await forwardedDuring(async () => {
      const error = await rejection(strict.bus.execute('mcp.connectServer', { name: 'late', config: http(url) }));
      expect(error).toMatchObject({ details: { reason: 'private_network' } });
    });
    expect(refused).toEqual([]);
  });

  it("connects an A2A agent through its entry's proxy", async () => {
    const peer = await startPeer('echo');
    const port = new URL(peer.url).port;
    let stop = (): Promise<void> => Promise.resolve();
    try {
      const passed = await forwardedDuring(async () => {
        const app = await startApp({ a2aAgents: { peer: { url: peer.url, proxy: proxy.url } } }, { deps: { env: {} } });
        stop = () => app.stop();
        await until(async () => {
          const res = await fetch(`${app.url}/api/mcp/servers`);
          const { servers } = (await res.json()) as { servers: { name: string; status: string }[] };
          return servers.find((s) => s.name === 'peer')?.status === 'connected';
        }, 'the A2A agent connected');
      });
      expect(passed).toContain(`CONNECT 127.0.0.1:${port}`);
    } finally {
      await stop();
      await peer.close();
    }
  });
});
