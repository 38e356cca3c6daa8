/**
 * Resource subscriptions shared by principals, against server-everything over stdio through the running
 * app: one principal's unsubscribe leaves another's subscription standing, a restarted server is
 * subscribed again to what someone still follows, and the last one leaving ends it.
 * server-everything's `toggle-subscriber-updates` sends one `notifications/resources/updated` at once
 * for every URI its client is subscribed to, so each toggle shows what the server holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAs, untilServersConnected } from '../support/keyed-app.ts';
import { everythingStdio, roomyLimits } from '../support/messaging.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef0';
const OPS = 'ops-key-0123456789abcdef00';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
  { name: 'ops', key: OPS, scopes: ['admin'] },
];
const SHARED = 'demo://resource/dynamic/text/11';
const OTHER = 'demo://resource/dynamic/text/12';

describe('resource subscriptions shared by principals', () => {
  let svc: RunningApp;
  let alice: WsClient;
  const call = (key: string, method: string, path: string, body?: unknown) =>
    callAs(() => svc, key, method, path, body);
  const subscribe = async (key: string, uri: string, on: boolean) => {
    const r = await call(key, 'POST', `/api/mcp/servers/everything/resources/${on ? 'subscribe' : 'unsubscribe'}`, {
      uri,
    });
    expect(r.body).toMatchObject({ serverId: 'everything', uri, subscribed: on });
  };
  /** The URIs the server sends updates for now, once `last` (which someone follows) has come. */
  const updatedNow = async (last: string): Promise<string[]> => {
    const from = alice.frames.length;
    expect(
      (await call(OPS, 'POST', '/api/mcp/servers/everything/tools/toggle-subscriber-updates/execute', {})).status,
    ).toBe(200);
    try {
      await alice.next((f) => f.event === 'resourceUpdated' && f.data.uri === last, undefined, from);
      return alice.frames
        .slice(from)
        .filter((f) => f.event === 'resourceUpdated')
        .map((f) => f.data.uri as string);
    } finally {
      expect(
        (await call(OPS, 'POST', '/api/mcp/servers/everything/tools/toggle-subscriber-updates/execute', {})).status,
      ).toBe(200);
    }
  };

  beforeAll(async () => {
    svc = await startApp({ server: { ...roomyLimits, auth: { keys } }, mcpServers: { everything: everythingStdio } });
    await untilServersConnected(() => svc, 'server-everything connected', { key: ALICE });
    alice = await connectWs(`${svc.wsUrl}?token=${ALICE}`);
  });
  afterAll(async () => {
    alice?.close();
    await svc?.stop();
  });

  it("one principal's unsubscribe leaves another's subscription standing", async () => {
    await subscribe(ALICE, SHARED, true);
    await subscribe(BOB, SHARED, true);
    await subscribe(BOB, SHARED, false);
    expect(await updatedNow(SHARED)).toEqual([SHARED]);
  });

  it('a restarted server is subscribed again to what someone still follows', async () => {
    expect((await call(OPS, 'POST', '/api/mcp/servers/everything/restart')).status).toBe(200);
    await untilServersConnected(() => svc, 'server-everything connected again', { key: ALICE });
    // The new connection is subscribed right after it connects, before any later request on it.
    expect(await updatedNow(SHARED)).toEqual([SHARED]);
  });

  it('the last subscriber leaving ends the subscription on the server', async () => {
    await subscribe(BOB, OTHER, true);
    await subscribe(ALICE, SHARED, false);
    // Updates of OTHER (bob's) still come; SHARED's no longer do.
    expect(await updatedNow(OTHER)).toEqual([OTHER]);
  });
});
