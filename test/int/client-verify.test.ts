/**
 * The client's receivers' helpers against what agentd really sends: a webhook added through the client and
 * delivered after a turn passes `verifyWebhook` (and a changed body or a wrong secret does not); an A2A push
 * notification of a task (set through `@a2a-js/sdk`, the only way to ask for one) passes `verifyPushNotification`
 * against agentd's JWKS, its body's digest included (and a changed body does not).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { AgentdClient, verifyPushNotification, verifyWebhook } from '../../src/client/index.ts';
import { data, send, text, v1Client } from '../support/a2a-clients.ts';
import { everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';

const ADMIN = 'verify-admin-key-0123456789abcdef';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
let receiver: Server;
let receiverUrl: string;
let app: RunningApp;
const env = useSimulatorAndFolder('agentd-client-verify-');

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  app = await env.apps.start(
    {
      mcpServers: { everything: everythingStdio },
      toolPolicy: { rules: [{ server: 'everything', tool: 'echo', action: 'ask' }] },
      server: { ...roomyLimits, auth: { adminKey: ADMIN }, mcp: { allowPrivateNetworks: true } },
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const at = async (path: string) => {
  await expect.poll(() => received.some((r) => r.path === path), { timeout: 15_000 }).toBe(true);
  return received.find((r) => r.path === path)!;
};

describe('verifyWebhook and verifyPushNotification', () => {
  it('verifies a webhook delivery agentd signed, and refuses a changed one', async () => {
    const client = new AgentdClient({ baseUrl: app.url, apiKey: ADMIN });
    await client.api.addWebhook({
      body: { id: 'hook', url: `${receiverUrl}/hook`, events: ['turn.completed'], secret: SECRET },
    });
    await client.send('hooked', 'hello [[reply:done]]');
    const got = await at('/hook');
    const payload = (await verifyWebhook(SECRET, got.headers, got.body)) as {
      type: string;
    };
    expect(payload.type).toBe('turn.completed');
    await expect(verifyWebhook(SECRET, got.headers, `${got.body} `)).rejects.toMatchObject({
      code: 'INVALID_SIGNATURE',
    });
    const other = `whsec_${Buffer.alloc(32, 8).toString('base64')}`;
    await expect(verifyWebhook(other, got.headers, got.body)).rejects.toThrow(/no webhook-signature matches/);
    await client.api.deleteWebhook({ webhookId: 'hook' });
  });

  it("verifies an A2A push notification's JWT against agentd's JWKS, and refuses a changed body", async () => {
    const a2a = await v1Client(app, ADMIN);
    const asked = await send(a2a, [text('[[tool:echo {"message":"push me"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const url = `${receiverUrl}/push`;
    await a2a.createTaskPushNotificationConfig({ tenant: '', id: '', taskId: asked.id, url, token: 't' } as never);
    await send(a2a, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
    const got = await at('/push');
    const jwksUrl = `${app.url}/.well-known/jwks.json`;
    const check = { jwksUrl, audience: url, issuer: app.config.name, body: got.body };
    const claims = await verifyPushNotification(String(got.headers.authorization), check);
    expect(claims).toMatchObject({ taskId: asked.id, aud: url });
    await expect(
      verifyPushNotification(String(got.headers.authorization), { ...check, body: `${got.body} ` }),
    ).rejects.toThrow(/the body is not the one signed/);
    await expect(
      verifyPushNotification(String(got.headers.authorization), { ...check, audience: 'http://elsewhere/' }),
    ).rejects.toThrow(/aud/);
  });
});
