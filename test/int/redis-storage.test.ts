/**
 * agentd on the Redis store: sessions survive a restart of the service, health follows the store's connection, and a
 * missing Redis stops start-up.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const enabled = hasRedisServer();

describe.skipIf(!enabled)('storage: redis', () => {
  let redis: RedisServer;
  let sim: Simulator;
  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator();
  });
  afterAll(async () => {
    await sim.close();
    await redis.stop();
  });

  it('keeps the conversation in Redis: a new service over the same Redis serves its history and continues its seq', async () => {
    const storage = { type: 'redis', url: redis.url, keyPrefix: `int${randomUUID()}:` };
    const ask = (url: string, message: string) =>
      fetch(`${url}/api/message-sync`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ message }),
      }).then((r) => r.json() as Promise<{ response: string }>);
    const first = await startApp({ storage }, { modelUrl: sim.url });
    expect((await ask(first.url, 'Remember the word kiwi')).response).toBe('You said: Remember the word kiwi');
    await first.stop();

    const second = await startApp({ storage }, { modelUrl: sim.url });
    try {
      const history = (await (await fetch(`${second.url}/api/sessions/default/history`)).json()) as {
        events: { event: string }[];
        lastSeq: number;
      };
      expect(history.events.map((e) => e.event)).toEqual(['userMessage', 'response']);
      expect((await ask(second.url, 'And now?')).response).toBe('You said: And now?');
      const sessions = (await (await fetch(`${second.url}/api/sessions`)).json()) as {
        sessions: { id: string; lastSeq: number }[];
      };
      expect(sessions.sessions).toEqual([expect.objectContaining({ id: 'default', lastSeq: 4 })]);
    } finally {
      await second.stop();
    }
  });

  it('says degraded while Redis is away, before any write fails, and ready only once the store can write again', async () => {
    const own = await startRedis();
    const app = await startApp(
      { storage: { type: 'redis', url: own.url, keyPrefix: `int${randomUUID()}:` } },
      { modelUrl: sim.url },
    );
    let restarted: RedisServer | undefined;
    try {
      const agentHealth = async () => (await api(app.url, 'GET', '/api/health')).body.agent as { status: string };
      expect(await agentHealth()).toMatchObject({ status: 'ready' });
      await own.stop();
      await expect.poll(agentHealth, PATIENT).toMatchObject({ status: 'degraded' });
      restarted = await startRedis(Number(new URL(own.url).port));
      await expect.poll(agentHealth, PATIENT).toMatchObject({ status: 'ready' });
      // Ready means the store answers: a turn is stored at once.
      expect((await api(app.url, 'POST', '/api/message-sync', { message: 'back' })).status).toBe(200);
    } finally {
      await app.stop();
      await own.stop(); // (stops once: a second call waits on the same exit)
      await restarted?.stop();
    }
  });

  it('refuses to start when Redis cannot be reached, naming it', async () => {
    await expect(startApp({ storage: { type: 'redis', url: 'redis://127.0.0.1:1' } })).rejects.toThrow(
      /cannot reach Redis at redis:\/\/127\.0\.0\.1:1/,
    );
  });
});
