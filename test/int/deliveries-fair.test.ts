/**
 * Deliveries kept fair (issue 72 item 1; docs/webhooks.md, "Fair between receivers"), on a real agentd with real
 * receivers on 127.0.0.1: a webhook receiver that accepts the connection and never answers delays only its own
 * deliveries while a healthy webhook beside it gets every one; past `pendingPerWebhook` a delivery is recorded as
 * failed and counted, not queued; a URL with `user:pass@` is refused and a kept one never listed with its password;
 * past `pushConfigsPerPrincipal` an A2A push config is refused with A2A's error shapes, another principal's is not.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { createJsonlRecordStore } from '../../src/store/records/index.ts';
import { createRecordOutbox } from '../../src/webhooks/outbox-records.ts';
import { rawRpc, text, userMessage, v1Client } from '../support/a2a-clients.ts';
import { api, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-fair-');
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** A receiver on loopback: `answers` false never answers (the connection stays open). */
async function receiver(answers: boolean) {
  const got: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push(body);
      if (answers) res.writeHead(204).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, got };
}

const hook = (id: string, url: string) => ({ id, url, events: ['turn.completed'], secret, timeoutMs: 60_000 });
const turns = async (url: string, n: number) => {
  for (let i = 0; i < n; i++)
    expect(
      (await api(url, 'POST', '/api/message-sync', { message: `[[reply:turn ${i}]]`, sessionId: 'f' })).status,
    ).toBe(200);
};
const deliveriesOf = async (url: string, id: string) =>
  (await api(url, 'GET', `/api/webhooks/${id}/deliveries`)).body.deliveries as Record<string, unknown>[];

describe('deliveries kept fair', () => {
  it("a receiver that never answers delays only its own deliveries: the healthy webhook's arrive meanwhile", async () => {
    const [dead, healthy] = [await receiver(false), await receiver(true)];
    const app = await env.apps.start(
      { webhooks: [hook('dead', dead.url), hook('ok', healthy.url)] },
      { modelUrl: env.sim.url },
    );
    await turns(app.url, 12);
    await expect.poll(() => healthy.got.length, PATIENT).toBe(12);
    // The dead receiver holds its in-flight limit (4) of unanswered requests; its other deliveries wait, unattempted.
    expect(dead.got.length).toBeLessThanOrEqual(4);
    const waiting = await deliveriesOf(app.url, 'dead');
    expect(waiting).toHaveLength(12);
    expect(waiting.every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true);
    await env.apps.stop(app); // ends the attempts in flight at once
  });

  it('records a delivery past pendingPerWebhook as failed, saying so, and counts it', async () => {
    const dead = await receiver(false);
    const app = await env.apps.start(
      {
        webhooks: [hook('dead', dead.url)],
        server: { ...roomyLimits, limits: { ...roomyLimits.limits, deliveries: { pendingPerWebhook: 3 } } },
      },
      { modelUrl: env.sim.url },
    );
    await turns(app.url, 5);
    const listed = await deliveriesOf(app.url, 'dead');
    expect(listed.filter((d) => d.status === 'pending')).toHaveLength(3);
    expect(listed.filter((d) => d.status === 'failed')).toEqual([
      expect.objectContaining({
        attempts: 0,
        lastError: expect.stringMatching(
          /^not queued: 3 deliveries of webhook:dead were pending, the most server\.limits\.deliveries\.pendingPerWebhook allows$/,
        ),
      }),
      expect.objectContaining({ attempts: 0, lastError: expect.stringMatching(/^not queued/) }),
    ]);
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toContain('agentd_deliveries_refused_total{kind="webhook"} 2');
    await env.apps.stop(app);
  });

  it('refuses a webhook URL with user:pass@, and never lists a kept one with its password', async () => {
    const dir = join(env.dir, 'creds');
    const storage = { type: 'jsonl', dir };
    let app = await env.apps.start({ storage }, { modelUrl: env.sim.url });
    const refused = await api(app.url, 'POST', '/api/webhooks', {
      ...hook('creds', 'http://user:s3cret-pw@127.0.0.1:9/hook'),
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      success: false,
      error: { code: 'INVALID_REQUEST', details: { field: 'url' } },
    });
    expect(JSON.stringify(refused.body)).not.toContain('s3cret-pw');
    await env.apps.stop(app);
    // One kept by an earlier agentd (before they were refused) is listed without its password.
    const records = createJsonlRecordStore({ dir, log: createLogger('silent') });
    await records.open();
    const outbox = createRecordOutbox({ records, log: createLogger('silent') });
    await outbox.addWebhook({
      ...hook('old', 'http://user:s3cret-pw@127.0.0.1:9/hook'),
      retryScheduleMs: [1000],
    } as never);
    await records.close();
    app = await env.apps.start({ storage }, { modelUrl: env.sim.url });
    const listed = await api(app.url, 'GET', '/api/webhooks');
    expect(listed.body.webhooks).toEqual([
      expect.objectContaining({ id: 'old', url: 'http://user:***@127.0.0.1:9/hook' }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain('s3cret-pw');
    await env.apps.stop(app);
  });

  it('refuses an A2A push config past pushConfigsPerPrincipal with 429 in both bindings; another principal is not', async () => {
    const keys = [
      { name: 'alice', key: 'alice-key-0123456789abcdef', scopes: ['chat'] },
      { name: 'bob', key: 'bob-key-0123456789abcdefgh', scopes: ['chat'] },
    ];
    const [alice, bob] = [keys[0]!.key, keys[1]!.key];
    const app = await env.apps.start(
      {
        server: {
          ...roomyLimits,
          limits: { ...roomyLimits.limits, deliveries: { pushConfigsPerPrincipal: 2 } },
          auth: { keys },
          mcp: { allowPrivateNetworks: true },
        },
      },
      { modelUrl: env.sim.url },
    );
    const url = (await receiver(true)).url;
    /** A task still working (its first piece comes after a minute). */
    const working = async (key: string): Promise<string> => {
      const task: any = await (
        await v1Client(app, key)
      ).sendMessage({
        message: userMessage([text('[[ttft:60000]] slow')]),
        configuration: { returnImmediately: true, acceptedOutputModes: [] },
      } as any);
      return task.id as string;
    };
    const create = (key: string, taskId: string, id: string) =>
      rawRpc(
        app,
        key,
        { jsonrpc: '2.0', id: 1, method: 'CreateTaskPushNotificationConfig', params: { taskId, id, url } },
        { 'A2A-Version': '1.0' },
      );
    const [t1, t2, t3] = [await working(alice), await working(alice), await working(alice)];
    expect((await create(alice, t1, 'a')).body.result).toMatchObject({ id: 'a' });
    expect((await create(alice, t2, 'b')).body.result).toMatchObject({ id: 'b' });
    const refused = await create(alice, t3, 'c');
    expect(refused.body.error).toMatchObject({
      code: -32000,
      data: [
        {
          reason: 'RATE_LIMIT_EXCEEDED',
          domain: 'agentd',
          metadata: { code: 'RATE_LIMIT_EXCEEDED', limit: '2', remaining: '0', reason: 'push_configs_per_principal' },
        },
      ],
    });
    const rest = await fetch(`${app.url}/a2a/rest/tasks/${encodeURIComponent(t3)}/pushNotificationConfigs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ taskId: t3, id: 'c', url }),
    });
    expect(rest.status).toBe(429);
    expect(await rest.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
    // Replacing one it holds, and another principal's, pass.
    expect((await create(alice, t1, 'a')).body.result).toMatchObject({ id: 'a' });
    expect((await create(bob, await working(bob), 'b1')).body.result).toMatchObject({ id: 'b1' });
    await env.apps.stop(app);
  });
});
