/**
 * The phases of a chaos run once its processes are up (setup.ts): WebSocket clients follow the sessions, the approval
 * bot answers, the load and the faults run for `--seconds` (progress on stderr every 5 s), then both stop (the
 * schedule is paused), the run settles (settle.ts) and everything the checker needs is read into a `Recorded` (the
 * MCP tasks' states by `tasks/get`).
 */
import { startApprovalBot } from './approval-bot.ts';
import type { ChaosArgs } from './args.ts';
import { markerLines, readSessions } from './collect.ts';
import { call } from './http.ts';
import { restart, startFaults } from './faults.ts';
import { startLoad, type Load } from './load.ts';
import { readMcpTasks } from './mcp.ts';
import { pushedTask } from './receivers.ts';
import type { Frame, Recorded } from './recorded.ts';
import { watchSchedule } from './schedule-watch.ts';
import { catchUp, settle } from './settle.ts';
import type { Setup } from './setup.ts';
import { sleep } from './wait.ts';
import { createFollower, type Follower } from './ws-follower.ts';
import { totalOperations, upInstance, type World } from './world.ts';

const FOLLOWERS = 4;
const CHAT_SESSIONS = 8;
const A2A_SESSIONS = 3;
const MCP_SESSIONS = 2;
const SETTLE_MS = 120_000;

export async function drive(args: ChaosArgs, world: World, env: Setup, log: (line: string) => void): Promise<Recorded> {
  const chat = Array.from({ length: CHAT_SESSIONS }, (_, i) => `c${args.seed}-s${i + 1}`);
  const a2a = Array.from({ length: A2A_SESSIONS }, (_, i) => `c${args.seed}-a${i + 1}`);
  const mcp = Array.from({ length: MCP_SESSIONS }, (_, i) => `c${args.seed}-m${i + 1}`);
  const prng = world.prng.fork('followers');
  const bot = startApprovalBot(world, [...chat, ...a2a, ...mcp]);
  const late: { load?: Load } = {};
  const followers: Follower[] = [];
  for (let i = 0; i < FOLLOWERS; i++) {
    const mine: string[] = [];
    while (mine.length < 3) {
      const s = prng.pick(chat);
      if (!mine.includes(s)) mine.push(s);
    }
    if (i === 0) mine.push(env.scheduleSession);
    const route = world.prng.fork(`ws-${i + 1}`);
    const onFrame = (f: Follower, frame: Frame) => {
      late.load?.onFrame(f, frame);
      bot.onFrame(frame);
    };
    followers.push(createFollower(`ws-${i + 1}`, mine, () => upInstance(world, route, 'ws'), onFrame));
  }
  const reads = world.prng.fork('reads');
  const anyUp = () => upInstance(world, reads);
  const schedule = watchSchedule(env.scheduleId, anyUp);
  const load = (late.load = startLoad(world, { chat, a2a, mcp }, followers));
  const faults = startFaults(world, env.redis, env.model, log);

  const started = Date.now();
  const progress = setInterval(() => {
    const states = world.instances.map((i) => `${i.name}:${i.state}`).join(' ');
    const f = world.faultKinds.map((k) => `${k} ${world.faults[k]}`).join(' ');
    log(
      `${Math.round((Date.now() - started) / 1000)}/${args.seconds} s, ${totalOperations(world)} operations, ` +
        `faults ${f}; ${states}; redis ${env.redis.isUp() ? 'up' : 'down'}`,
    );
  }, 5000);
  await sleep(args.seconds * 1000);
  clearInterval(progress);
  log('load and faults stop; settling');
  await Promise.all([load.stop(20_000), faults.stop()]);
  for (const instance of world.instances) if (instance.state === 'down') await restart(instance, log);
  if (!env.redis.isUp()) await env.redis.start();
  // The schedule stops with the load, so the run can settle (its last ticks still run).
  const paused = await call(anyUp() ?? '', 'PATCH', `/api/schedules/${env.scheduleId}`, { paused: true });
  if (paused.status !== 200) log(`pausing the schedule answered ${paused.status} ${paused.error ?? paused.text}`);

  const settled = await settle(anyUp, env.webhookId, SETTLE_MS, log);
  if (!settled.settled)
    log(`did not settle: open turns e.g. ${settled.open.join(', ')}; ${settled.pending} deliveries pending`);
  const base = anyUp();
  if (base === undefined) throw new Error('no instance is up after the run');
  const before = await readSessions(base, true);
  const lastSeqs = new Map(before.map((s) => [s.id, Math.max(0, ...s.history.map((f) => f.data.seq ?? 0))]));
  if (!(await catchUp(followers, lastSeqs, 10_000))) log('a WebSocket client did not catch up in 10 s');
  for (const f of followers) f.close();
  await bot.stop();
  await sleep(500);
  return {
    sessions: await readSessions(base, true),
    acked: world.acked,
    ws: followers.flatMap((f) => f.views()),
    markerLines: await markerLines(env.markerFile),
    schedules: [{ id: env.scheduleId, sessionId: env.scheduleSession, runs: await schedule.finish(anyUp) }],
    webhooksOn: true,
    webhooks: env.webhooks.hits.map((h) => ({
      id: String(h.headers['webhook-id'] ?? ''),
      body: h.body,
      accepted: h.status < 300,
    })),
    a2aTasks: world.a2aTasks,
    pushes: env.pushes.hits.flatMap((h) => pushedTask(h.body) ?? []),
    mcpTasks: await readMcpTasks(world.mcpTasks, anyUp),
    stores: followers.flatMap((f) => f.stores()),
    lossyFaults: world.lossyFaults,
    syncs: world.syncs,
  };
}
