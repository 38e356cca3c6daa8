/**
 * agentd on the PostgreSQL store: a conversation survives a restart of the service, health follows the database
 * through a crash (`pg_ctl stop -m immediate`) and back, and a database it cannot use stops start-up naming the URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api } from '../support/messaging.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { startApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const enabled = hasPostgres();

describe.skipIf(!enabled)('storage: postgres', { timeout: 120_000 }, () => {
  let server: PostgresServer;
  let sim: Simulator;
  beforeAll(async () => {
    server = await startPostgres();
    sim = await startSimulator();
  }, 120_000);
  afterAll(async () => {
    await sim?.close();
    await server?.stop();
  });

  const ask = async (url: string, message: string) => api(url, 'POST', '/api/message-sync', { message });

  it('keeps the conversation in Postgres: a new service over the same schema serves its history and continues its seq', async () => {
    const storage = { type: 'postgres', url: server.url, schema: await server.freshSchema() };
    const first = await startApp({ storage }, { modelUrl: sim.url });
    expect((await ask(first.url, 'Remember the word kiwi')).body).toMatchObject({
      response: 'You said: Remember the word kiwi',
    });
    await first.stop();

    const second = await startApp({ storage }, { modelUrl: sim.url });
    try {
      const history = (await api(second.url, 'GET', '/api/sessions/default/history')).body as {
        events: { event: string }[];
      };
      expect(history.events.map((e) => e.event)).toEqual(['userMessage', 'response']);
      expect((await ask(second.url, 'And now?')).body).toMatchObject({ response: 'You said: And now?' });
      const sessions = (await api(second.url, 'GET', '/api/sessions')).body as { sessions: unknown[] };
      expect(sessions.sessions).toEqual([expect.objectContaining({ id: 'default', lastSeq: 4 })]);
    } finally {
      await second.stop();
    }
  });

  it('says degraded and fails a turn at once (reason storage) while Postgres is down, and is ready again once it is back, before any write', async () => {
    const storage = { type: 'postgres', url: server.url, schema: await server.freshSchema() };
    const app = await startApp({ storage }, { modelUrl: sim.url });
    try {
      const agentHealth = async () => (await api(app.url, 'GET', '/api/health')).body.agent as { status: string };
      expect((await ask(app.url, 'before')).status).toBe(200);
      expect(await agentHealth()).toMatchObject({ status: 'ready' });
      server.crash();
      const during = await ask(app.url, 'while down');
      expect(during.status).toBe(500);
      expect(during.body).toMatchObject({ error: { details: { reason: 'storage' } } });
      await expect.poll(agentHealth, PATIENT).toMatchObject({ status: 'degraded' });
      await server.start();
      await expect.poll(agentHealth, PATIENT).toMatchObject({ status: 'ready' });
      expect((await ask(app.url, 'back')).status).toBe(200);
      const history = (await api(app.url, 'GET', '/api/sessions/default/history')).body as {
        events: { event: string; data: { content?: string } }[];
      };
      expect(history.events.filter((e) => e.event === 'userMessage').map((e) => e.data.content)).toEqual([
        'before',
        'back',
      ]);
    } finally {
      await app.stop();
    }
  });

  it('refuses to start when the database cannot be used, naming the URL without its password', async () => {
    const url = server.url.replace(server.password, 'wrong-password');
    const started = startApp({ storage: { type: 'postgres', url } });
    await expect(started).rejects.toThrow(/PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres/);
    await expect(started).rejects.not.toThrow(/wrong-password/);
  });
});
