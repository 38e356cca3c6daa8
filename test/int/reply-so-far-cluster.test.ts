/**
 * No text lost to a gap, across instances (issue 73): a client that subscribes mid-reply on an instance that does not
 * run the session gets the reply's text so far (`replySoFar`: the holder seeds the watch with it, src/cluster/
 * fan-out.ts), then the live chunks, and the text it shows before the `response` is already `response.content`; on
 * one Redis and on one PostgreSQL alone.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinText } from '../../src/client/frames.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { roomyLimits, turnFrames } from '../support/messaging.ts';
import { hasPostgres, startPostgres } from '../support/postgres.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type Frame, type WsClient } from '../support/ws-client.ts';

/** The media a cluster runs on: one Redis, or one PostgreSQL alone (the seed then travels by NOTIFY). */
const engines = [
  {
    name: 'redis',
    enabled: hasRedisServer(),
    async start() {
      const redis = await startRedis();
      const storage = { type: 'redis', url: redis.url, keyPrefix: `reply${randomUUID()}:`, leaseMs: 1000 };
      return { storage, stop: () => redis.stop() };
    },
  },
  {
    name: 'postgres',
    enabled: hasPostgres(),
    async start() {
      const server = await startPostgres();
      const storage = { type: 'postgres', url: server.url, schema: await server.freshSchema(), leaseMs: 1000 };
      return { storage, stop: () => server.stop() };
    },
  },
];

/** The text a follower shows just before the turn's `response`, and that response's content. */
function joined(frames: Frame[]): { shown: string; content: unknown } {
  const end = frames.findIndex((f) => f.event === 'response');
  expect(end, frames.map((f) => f.event).join(' ')).toBeGreaterThan(0);
  return { shown: frames.slice(0, end).reduce((text, f) => joinText(text, f), ''), content: frames[end]?.data.content };
}
const eventsOf = (frames: Frame[]) => frames.map((f) => f.event).filter((e, i, all) => e !== all[i - 1]);
const chunksOf = (ws: WsClient, sessionId: string, from = 0) =>
  ws.frames.slice(from).filter((f) => f.event === 'chunk' && f.data.sessionId === sessionId).length;

for (const engine of engines)
  describe.skipIf(!engine.enabled)(
    `cluster on ${engine.name}: a subscribe mid-reply on another instance`,
    { timeout: 120_000 },
    () => {
      let medium: { stop(): Promise<void> } | undefined;
      let sim: Simulator;
      const apps: RunningApp[] = [];
      const clients: WsClient[] = [];
      const client = async (app: RunningApp) => {
        const c = await connectWs(app.wsUrl);
        clients.push(c);
        return c;
      };

      beforeAll(async () => {
        const started = await engine.start();
        medium = started;
        const { storage } = started;
        sim = await startSimulator();
        for (let i = 0; i < 2; i++)
          apps.push(
            await startApp({ storage, server: roomyLimits, llm: { timeoutMs: 10_000 } }, { modelUrl: sim.url }),
          );
      });
      afterAll(async () => {
        for (const c of clients) c.close();
        for (const app of apps) await app.stop();
        await sim?.close();
        await medium?.stop();
      });

      it('the holder seeds the watch: a late follower and a since subscribe on the other instance join', async () => {
        const [a, b] = apps as [RunningApp, RunningApp];
        const sender = await client(a); // the turn runs on A, which takes the session
        sender.send({ type: 'message', sessionId: 'far', content: 'far [[len:80]] [[rate:20]]' });
        await until(() => chunksOf(sender, 'far') >= 5, 'the reply streams on A');
        const late = await client(b);
        late.send({ type: 'subscribe', sessionId: 'far' }); // B starts watching the session now
        await until(() => late.frames.some((f) => f.event === 'replySoFar'), 'the reply so far reaches B');
        const resumed = await client(b);
        resumed.send({ type: 'subscribe', sessionId: 'far', since: 0 }); // B watches already: its own fold answers

        const fromSender = await turnFrames(sender, 'far', 0);
        const fromLate = await turnFrames(late, 'far', 0);
        const fromResumed = await turnFrames(resumed, 'far', 0);
        const { content } = joined(fromSender);
        expect(content).toMatch(/lorem/);
        expect(eventsOf(fromLate)).toEqual(['replySoFar', 'chunk', 'response']);
        expect((fromLate[0]!.data.content as string).length).toBeGreaterThan(0);
        expect(joined(fromLate).shown).toBe(content);
        expect(eventsOf(fromResumed)).toEqual(['userMessage', 'replySoFar', 'chunk', 'response']);
        expect(joined(fromResumed).shown).toBe(content);
      });

      it('a watch begun anew (the clients there left in between) is seeded anew', async () => {
        const b = apps[1]!;
        for (const c of clients.splice(1)) c.close(); // B watches the session no more
        const [sender] = clients as [WsClient];
        const from = sender.frames.length;
        sender.send({ type: 'message', sessionId: 'far', content: 'again [[len:80]] [[rate:20]]' });
        await until(() => chunksOf(sender, 'far', from) >= 5, 'the reply streams');
        const late = await client(b);
        late.send({ type: 'subscribe', sessionId: 'far' });
        const fromSender = await turnFrames(sender, 'far', from);
        const fromLate = await turnFrames(late, 'far', 0);
        expect(eventsOf(fromLate)).toEqual(['replySoFar', 'chunk', 'response']);
        expect(joined(fromLate).shown).toBe(joined(fromSender).content);
      });
    },
  );
