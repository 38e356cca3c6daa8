/**
 * Webhooks as a receiver sees them (docs/webhooks.md): a real HTTP server on loopback that fails and then accepts,
 * Standard Webhooks signatures checked with the specification's own library, one accepted delivery per event id
 * across retries, across agentd killed (-9) between attempts and killed with a stored fact not yet reacted to (the
 * restart catches the reaction up); the admin routes refuse bad webhooks by field; a
 * turn with no webhook writes nothing to the outbox.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rmdir } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { RECORDS_FILE } from '../../src/store/records/index.ts';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { api, useSimulatorAndFolder } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-webhooks-');
const secret = `whsec_${randomBytes(32).toString('base64')}`;

interface Received {
  body: string;
  headers: IncomingHttpHeaders;
  status: number;
}

/** A webhook receiver on loopback answering `failures` 503s, then 204s; what it received, in order. */
async function receiver(failures: number) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const status = received.length < failures ? 503 : 204;
      received.push({ body, headers: req.headers, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    accepted: () => received.filter((r) => r.status === 204),
  };
}
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

/** The headers `standardwebhooks` reads. */
const signed = (h: IncomingHttpHeaders) => ({
  'webhook-id': String(h['webhook-id']),
  'webhook-timestamp': String(h['webhook-timestamp']),
  'webhook-signature': String(h['webhook-signature']),
});

const hook = (url: string, over: Record<string, unknown> = {}) => ({
  id: 'done',
  url,
  events: ['turn.completed', 'turn.failed'],
  secret,
  retryScheduleMs: [200, 200, 200],
  ...over,
});

describe('webhooks', () => {
  it('delivers turn.completed signed, retried on 503 until accepted, once, with the same webhook-id', async () => {
    const rx = await receiver(2);
    const app = await env.apps.start({ webhooks: [hook(rx.url)] }, { modelUrl: env.sim.url });
    const reply = await api(app.url, 'POST', '/api/message-sync', {
      message: '[[reply:Hello hooks]]',
      sessionId: 'w1',
    });
    expect(reply.status).toBe(200);
    await expect.poll(() => rx.accepted().length, PATIENT).toBe(1);
    expect(rx.received.map((r) => r.status)).toEqual([503, 503, 204]);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const payload = new Webhook(secret).verify(rx.accepted()[0]!.body, signed(rx.accepted()[0]!.headers)) as any;
    expect(payload).toMatchObject({
      type: 'turn.completed',
      timestamp: expect.any(String),
      data: { sessionId: 'w1', turnId: expect.any(String), summary: 'Hello hooks', truncated: false },
    });
    expect(JSON.stringify(payload)).not.toContain('whsec_');
    // Another secret does not verify it.
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(
        rx.accepted()[0]!.body,
        signed(rx.accepted()[0]!.headers),
      ),
    ).toThrow();
    const deliveries = async () => (await api(app.url, 'GET', '/api/webhooks/done/deliveries')).body.deliveries;
    await expect
      .poll(deliveries, PATIENT)
      .toEqual([
        expect.objectContaining({ type: 'turn.completed', status: 'delivered', attempts: 3, lastStatusCode: 204 }),
      ]);
    expect((await deliveries())[0].id).toBe(rx.received[0]!.headers['webhook-id']);
    // A failed turn is announced too; an event it did not ask for is not.
    await api(app.url, 'POST', '/api/message-sync', { message: '[[error:500]] boom', sessionId: 'w1' });
    await expect
      .poll(() => rx.accepted().map((r) => JSON.parse(r.body).type), PATIENT)
      .toEqual(['turn.completed', 'turn.failed']);
  });

  it('admin routes add, list, read and delete webhooks, never showing a secret, and refuse bad ones by field', async () => {
    const rx = await receiver(0);
    const app = await env.apps.start({}, { modelUrl: env.sim.url });
    const refused = async (body: object) => (await api(app.url, 'POST', '/api/webhooks', body)).body.error;
    expect(await refused({ url: rx.url, events: ['turn.completed'] })).toMatchObject({
      code: 'MISSING_FIELD',
      details: { field: 'secret' },
    });
    expect(await refused({ url: rx.url, events: ['turn.done'], secret })).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: expect.stringMatching(/^events/) },
    });
    expect(await refused({ url: 'http://169.254.169.254/latest', events: ['turn.completed'], secret })).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'url', reason: 'metadata' },
    });
    expect(await refused({ url: 'http://[fe80::1]/x', events: ['turn.completed'], secret })).toMatchObject({
      details: { field: 'url', reason: 'link_local' },
    });
    const added = await api(app.url, 'POST', '/api/webhooks', hook(rx.url, { id: 'rt', events: ['session.deleted'] }));
    expect(added.status).toBe(200);
    expect(added.body.webhook).toMatchObject({ id: 'rt', source: 'api', events: ['session.deleted'] });
    const listed = await api(app.url, 'GET', '/api/webhooks');
    expect(listed.body.webhooks.map((w: { id: string }) => w.id)).toEqual(['rt']);
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(6, 20));
    // session.deleted reaches it.
    await api(app.url, 'POST', '/api/message-sync', { message: '[[reply:bye]]', sessionId: 'gone' });
    expect((await api(app.url, 'DELETE', '/api/sessions/gone')).status).toBe(200);
    await expect
      .poll(() => rx.accepted().map((r) => JSON.parse(r.body)), PATIENT)
      .toEqual([expect.objectContaining({ type: 'session.deleted', data: { sessionId: 'gone' } })]);
    expect((await api(app.url, 'DELETE', '/api/webhooks/rt')).status).toBe(200);
    expect((await api(app.url, 'GET', '/api/webhooks/rt')).body.error).toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
  });

  it('a turn with no webhook writes nothing to the outbox', async () => {
    const data = await mkdtemp(join(env.dir, 'none-'));
    const app = await env.apps.start({ storage: { type: 'jsonl', dir: data } }, { modelUrl: env.sim.url });
    expect((await api(app.url, 'POST', '/api/message-sync', { message: '[[reply:quiet]]' })).status).toBe(200);
    await env.apps.stop(app); // the session closes: whatever it wrote is in the file now
    const written = await readFile(join(data, RECORDS_FILE), 'utf8').catch(() => '');
    expect(written).not.toContain('outbox.');
  });

  it('given a fact stored but not yet reacted to when agentd is killed (-9), the restarted agentd delivers it once', async () => {
    const rx = await receiver(0);
    const data = await mkdtemp(join(env.dir, 'unreacted-'));
    const file = await writeAgentFile({
      llm: { provider: 'openai-compatible', baseURL: env.sim.url, model: 'sim', apiKey: 'k' },
      storage: { type: 'jsonl', dir: data },
      webhooks: [hook(rx.url)],
    });
    const run = async (): Promise<{ p: AgentdProcess; url: string }> => {
      const p = runAgentd(['--agent', file, '--web-port', '0']);
      return { p, url: `http://127.0.0.1:${await listeningPort(p)}` };
    };
    const stop = async (a: { p: AgentdProcess }, signal: NodeJS.Signals) => {
      a.p.child.kill(signal);
      await a.p.exited;
    };
    const message = (url: string, text: string, sessionId: string) =>
      api(url, 'POST', '/api/message-sync', { message: `[[reply:${text}]]`, sessionId });
    const summaries = () => rx.accepted().map((r) => JSON.parse(r.body).data.summary as string);
    // A first agentd announces a turn: the record store (outbox, checkpoints) is on disk.
    const first = await run();
    try {
      expect((await message(first.url, 'before', 'earlier')).status).toBe(200);
      await expect.poll(summaries, PATIENT).toEqual(['before']);
    } finally {
      await stop(first, 'SIGTERM');
    }
    // The next one started, the record store's file cannot be appended to (a folder where it goes, the file set
    // aside): the response is stored in the session's log, and keeping its delivery fails.
    const records = join(data, RECORDS_FILE);
    const second = await run();
    try {
      await rename(records, `${records}.aside`);
      await mkdir(records);
      expect((await message(second.url, 'after the crash', 'crash')).status).toBe(200);
      await expect.poll(() => second.p.out() + second.p.err(), PATIENT).toContain('reactions: a fact was not handled');
    } finally {
      await stop(second, 'SIGKILL');
    }
    expect(summaries()).toEqual(['before']);
    await rmdir(records);
    await rename(`${records}.aside`, records);
    // The restart opens the session whose reactions were not done, and catches them up.
    const third = await run();
    try {
      await expect.poll(summaries, PATIENT).toEqual(['before', 'after the crash']);
      const payload = new Webhook(secret).verify(rx.accepted()[1]!.body, signed(rx.accepted()[1]!.headers)) as any;
      expect(payload).toMatchObject({ type: 'turn.completed', data: { sessionId: 'crash' } });
    } finally {
      await stop(third, 'SIGTERM');
    }
    // A fourth start finds the checkpoints past both facts: nothing is announced again.
    const fourth = await run();
    try {
      await message(fourth.url, 'next', 'crash');
      await expect.poll(summaries, PATIENT).toEqual(['before', 'after the crash', 'next']);
    } finally {
      await stop(fourth, 'SIGTERM');
    }
  });

  it('given agentd killed (-9) between attempts, the restarted agentd delivers the same event once', async () => {
    const rx = await receiver(1);
    const data = await mkdtemp(join(env.dir, 'kill-'));
    const file = await writeAgentFile({
      llm: { provider: 'openai-compatible', baseURL: env.sim.url, model: 'sim', apiKey: 'k' },
      storage: { type: 'jsonl', dir: data },
      webhooks: [hook(rx.url, { retryScheduleMs: [1500, 200, 200] })],
    });
    const run = async (): Promise<{ p: AgentdProcess; url: string }> => {
      const p = runAgentd(['--agent', file, '--web-port', '0']);
      return { p, url: `http://127.0.0.1:${await listeningPort(p)}` };
    };
    const first = await run();
    try {
      const reply = await api(first.url, 'POST', '/api/message-sync', { message: '[[reply:survives]]' });
      expect(reply.status).toBe(200);
      await expect.poll(() => rx.received.length, PATIENT).toBe(1); // the first attempt, answered 503
    } finally {
      first.p.child.kill('SIGKILL');
      await first.p.exited;
    }
    const second = await run();
    try {
      await expect.poll(() => rx.accepted().length, PATIENT).toBe(1);
      const ids = new Set(rx.received.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      const payload = new Webhook(secret).verify(rx.accepted()[0]!.body, signed(rx.accepted()[0]!.headers)) as any;
      expect(payload.data.summary).toBe('survives');
      const deliveries = async () => (await api(second.url, 'GET', '/api/webhooks/done/deliveries')).body.deliveries;
      await expect.poll(deliveries, PATIENT).toEqual([expect.objectContaining({ status: 'delivered' })]);
      expect(rx.accepted()).toHaveLength(1);
    } finally {
      second.p.child.kill('SIGTERM');
      await second.p.exited;
    }
  });
});
