/**
 * Brings up what a chaos run runs against, in its own folder, everything registered for cleanup: the redis-server
 * (with `--lossy` or `--replicas`, a primary and its replica behind a proxy: redis-pair.ts),
 * the model (simulator and slow-model proxy), the webhook and A2A push receivers, K agentd instances, then (over
 * REST, before any session exists) a webhook for every turn ending with short retries (known to every instance
 * before the load starts), and a per-second schedule
 * (`overlap: queue`, `catchUp: last`) whose ticks run in one session.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentFile } from './agent-file.ts';
import type { ChaosArgs } from './args.ts';
import { onCleanup } from './cleanup.ts';
import { call } from './http.ts';
import { agentdCommand, buildProblem, createInstance, type Instance } from './instances.ts';
import type { Prng } from './prng.ts';
import { startReceiver, type Receiver } from './receivers.ts';
import { redisPair, type RedisPair } from './redis-pair.ts';
import { chaosRedis, type ChaosRedis } from './redis-server.ts';
import { startSlowModel, type SlowModel } from './slow-model.ts';
import { freePort, until } from './wait.ts';

export interface Setup {
  /** A pair (primary and replica) with `--lossy` or `--replicas`. */
  redis: ChaosRedis | RedisPair;
  model: SlowModel;
  webhooks: Receiver;
  pushes: Receiver;
  instances: Instance[];
  markerFile: string;
  webhookId: string;
  scheduleId: string;
  scheduleSession: string;
}

/** Webhook retries: quick, so every delivery is settled soon after the load stops. */
const RETRIES_MS = [200, 500, 1000, 2000, 3000, 5000, 8000, 8000, 8000];

export async function setUp(args: ChaosArgs, dir: string, prng: Prng, log: (line: string) => void): Promise<Setup> {
  const redisDir = join(dir, 'redis');
  mkdirSync(redisDir);
  let redis: ChaosRedis | RedisPair;
  if (args.lossy || args.replicas > 0) redis = await redisPair(redisDir);
  else {
    redis = chaosRedis(await freePort(), redisDir);
    await redis.start();
  }
  const model = await startSlowModel();
  onCleanup(() => model.close());
  const webhooks = await startReceiver(join(dir, 'webhooks.ndjson'), prng.fork('webhook-receiver'), 0.1);
  onCleanup(() => webhooks.close());
  const pushes = await startReceiver(join(dir, 'pushes.ndjson'), prng.fork('push-receiver'), 0);
  onCleanup(() => pushes.close());

  const markerFile = join(dir, 'marker.txt');
  const file = join(dir, 'agent.yml');
  const keyPrefix = `chaos-${args.seed}:`;
  const stampFile = join(dir, 'stamps.txt');
  writeFileSync(
    file,
    JSON.stringify(
      agentFile({
        modelUrl: model.url,
        redisUrl: redis.url,
        keyPrefix,
        markerFile,
        stampFile,
        replicas: args.replicas,
      }),
    ),
  );
  const problem = args.sources ? undefined : buildProblem();
  if (problem) throw new Error(problem);
  const command = agentdCommand(args.sources);
  const instances: Instance[] = [];
  for (let n = 1; n <= args.instances; n++)
    instances.push(createInstance(n, await freePort(), { agentFile: file, dir, command }));
  log(`starting ${instances.length} agentd instances (${args.sources ? 'sources through tsx' : 'bin/agentd.js'})`);
  await Promise.all(instances.map((i) => i.start()));

  const base = instances[0]!.url;
  const webhookId = 'chaos';
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const hook = await call(base, 'POST', '/api/webhooks', {
    id: webhookId,
    url: webhooks.url,
    events: ['turn.completed', 'turn.failed'],
    secret,
    retryScheduleMs: RETRIES_MS,
    timeoutMs: 5000,
  });
  if (hook.status !== 200) throw new Error(`POST /api/webhooks answered ${hook.status}: ${hook.text}`);
  // Another instance learns of a webhook added at runtime at its next look (about a second): a fact it stores before
  // is not announced. The load starts once every instance lists it.
  const knows = async (i: Instance) => {
    const listed = await call(i.url, 'GET', '/api/webhooks');
    return ((listed.body as { webhooks?: { id: string }[] } | undefined)?.webhooks ?? []).some(
      (w) => w.id === webhookId,
    );
  };
  await until(
    async () => (await Promise.all(instances.map(knows))).every(Boolean),
    'every instance knows the webhook',
    30_000,
  );
  const scheduleId = `tick-${args.seed}`;
  const scheduleSession = `c${args.seed}-ticks`;
  const schedule = await call(base, 'POST', '/api/schedules', {
    id: scheduleId,
    everyMs: 1000,
    message: 'tick {{firedAt}}',
    session: scheduleSession,
    overlap: 'queue',
    catchUp: 'last',
  });
  if (schedule.status !== 200 && schedule.status !== 201)
    throw new Error(`POST /api/schedules answered ${schedule.status}: ${schedule.text}`);
  return { redis, model, webhooks, pushes, instances, markerFile, webhookId, scheduleId, scheduleSession };
}
