/**
 * Deliveries under abuse (issue 72 item 1): one chat principal (`mallory`) points A2A push configs at 100 receivers
 * that accept the connection and never answer (100 ports on loopback: 100 receivers), one per task, and keeps adding
 * more while another principal (`carol`) gets her push notifications and the admin's webhook (`turn.completed`, every
 * principal's turns) gets its deliveries, both at a healthy receiver in the bench process. Measured: the lag of each
 * healthy delivery, from the fact's stored time (the push body's `task.status.timestamp`, the webhook body's
 * `timestamp`) to its arrival; deliveries that had not arrived `GRACE_MS` after the window count with their wait so
 * far. The agent file (bench/agents/bench-deliveries.yml) leaves `server.limits.deliveries` at its defaults, so the
 * same file measures an agentd from before them (the figure: p50 65.8 s).
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { ms, type Bench } from '../lib/bench.ts';
import { cpuWindow, startService, type Service } from '../lib/procs.ts';
import { round, Samples, sleep } from '../lib/stats.ts';

const DEAD = 100;
const MALLORY = 'bench-mallory-key-0123456789';
const CAROL = 'bench-carol-key-0123456789ab';
const ROOT = 'bench-root-key-0123456789abc';
/** How long deliveries still on their way after the window are waited for. */
const GRACE_MS = 15_000;

/** 100 receivers that accept the connection and never answer. */
async function deadReceivers() {
  const sockets: Socket[] = [];
  let connections = 0;
  const servers: Server[] = [];
  for (let i = 0; i < DEAD; i++) {
    const server = createTcpServer((socket) => {
      connections++;
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  return {
    urls: servers.map((s) => `http://127.0.0.1:${(s.address() as { port: number }).port}/dead`),
    connections: () => connections,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

type Arrival = { storedAt: number; at: number };

/** The healthy receiver: each delivery it got by its turn (`/push`, `/hook`): the fact's stored time, its arrival. */
async function healthyReceiver() {
  const got = { push: new Map<string, Arrival>(), hook: new Map<string, Arrival>() };
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(204).end();
      const parsed = JSON.parse(body) as {
        timestamp?: string;
        data?: { turnId?: string };
        task?: { id?: string; status?: { timestamp?: string } };
      };
      if (req.url === '/push') {
        const turnId = String(parsed.task?.id?.split('/').at(-1));
        got.push.set(turnId, { storedAt: Date.parse(parsed.task?.status?.timestamp ?? ''), at });
      } else got.hook.set(String(parsed.data?.turnId), { storedAt: Date.parse(parsed.timestamp ?? ''), at });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { base, got, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * An A2A v1.0 SendMessage as `key` (blocking: it answers once the task completed), its push config at `url`: the
 * task's turn and when the answer came (after the fact was stored).
 */
async function sendWithPush(svc: Service, key: string, url: string): Promise<{ turnId: string; at: number }> {
  const res = await fetch(`${svc.url}/a2a`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: '[[reply:ok]]' }] },
        configuration: { taskPushNotificationConfig: { url, token: 'bench' } },
      },
    }),
  });
  const answer = (await res.json()) as { error?: { message: string }; result?: { task?: { id?: string } } };
  if (answer.error) throw new Error(`SendMessage: ${answer.error.message}`);
  return { turnId: String(answer.result?.task?.id?.split('/').at(-1)), at: Date.now() };
}

/** A metric's value in agentd's `/metrics` (0 when absent: an agentd without it). */
async function metric(svc: Service, name: string): Promise<number> {
  const text = await (await fetch(`${svc.url}/metrics`, { headers: { Authorization: `Bearer ${ROOT}` } })).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/**
 * The lag of each expected delivery (by turn, with when its message was answered): from its fact's stored time to its
 * arrival, or, not arrived by `end`, its wait so far (from the answer: a floor).
 */
function lags(arrived: Map<string, Arrival>, expected: Map<string, number>, end: number): Samples {
  const samples = new Samples();
  for (const [turnId, answeredAt] of expected) {
    const a = arrived.get(turnId);
    samples.push(a ? a.at - a.storedAt : end - answeredAt);
  }
  return samples;
}

export const deliveriesBench: Bench = {
  name: 'deliveries',
  title: "Deliveries under abuse: 100 dead push receivers of one principal, another's push and an admin webhook",
  quick: false,
  async run({ mode, sim, log }) {
    const windowMs = mode === 'full' ? 60_000 : 20_000;
    const dead = await deadReceivers();
    const healthy = await healthyReceiver();
    let svc: Service | undefined;
    try {
      svc = await startService({
        modelUrl: sim.url,
        agent: 'bench-deliveries.yml',
        env: { BENCH_WEBHOOK_URL: `${healthy.base}/hook` },
      });
      const service = svc;
      log(`  mallory sets ${DEAD} push configs on dead receivers (one task each)`);
      const setUp = Date.now();
      for (let i = 0; i < DEAD; i += 10)
        await Promise.all(dead.urls.slice(i, i + 10).map((url) => sendWithPush(service, MALLORY, url)));
      log(`  ${windowMs / 1000} s: carol's messages every 250 ms, mallory's every 200 ms (dead receivers)`);
      const setUpMs = Date.now() - setUp;
      const cpu = cpuWindow({ agentd: service.pid });
      const start = Date.now();
      const carolSent = new Map<string, number>();
      const allSent = new Map<string, number>(); // the admin webhook hears every turn
      const note = (sent: { turnId: string; at: number }, mine?: Map<string, number>) => {
        mine?.set(sent.turnId, sent.at);
        allSent.set(sent.turnId, sent.at);
      };
      const every = async (periodMs: number, send: (i: number) => Promise<void>) => {
        for (let t = start, i = 0; Date.now() - start < windowMs; t += periodMs, i++) {
          await send(i);
          await sleep(Math.max(0, t + periodMs - Date.now()));
        }
      };
      await Promise.all([
        every(250, async () => note(await sendWithPush(service, CAROL, `${healthy.base}/push`), carolSent)),
        every(200, async (i) => note(await sendWithPush(service, MALLORY, dead.urls[i % DEAD]!))),
      ]);
      const arrivedAll = () =>
        [...carolSent.keys()].every((t) => healthy.got.push.has(t)) &&
        [...allSent.keys()].every((t) => healthy.got.hook.has(t));
      const deadline = Date.now() + GRACE_MS;
      while (!arrivedAll() && Date.now() < deadline) await sleep(100);
      const end = Date.now();
      const used = cpu();
      const push = lags(healthy.got.push, carolSent, end).summary();
      const hook = lags(healthy.got.hook, allSent, end).summary();
      const arrived = (got: Map<string, Arrival>, sent: Map<string, number>) =>
        [...sent.keys()].filter((t) => got.has(t)).length;
      const refused = await metric(service, 'agentd_deliveries_refused_total');
      const opened = await metric(service, 'agentd_delivery_circuits_opened_total');
      const row = (s: typeof push) => `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)}`;
      return {
        name: 'deliveries',
        title: this.title,
        load: `${DEAD} dead receivers (loopback ports that accept and never answer); mallory (chat) sets one A2A push config on each (${DEAD} tasks), then one more every 200 ms round-robin; carol (chat) sends a message with a push config to a healthy receiver every 250 ms; the admin's webhook gets every turn.completed at the same receiver. ${windowMs / 1000} s window, then up to ${GRACE_MS / 1000} s for deliveries on their way. Default server.limits.deliveries.`,
        rows: [
          ["carol's push notifications: lag p50 / p99 / max", row(push)],
          ["admin webhook's deliveries: lag p50 / p99 / max", row(hook)],
          [
            'arrived / expected within the window and its grace (push, webhook)',
            `${arrived(healthy.got.push, carolSent)} / ${carolSent.size}, ${arrived(healthy.got.hook, allSent)} / ${allSent.size}`,
          ],
          ['connections the dead receivers accepted', dead.connections()],
          ["mallory's deliveries not queued (cap) / circuits opened", `${refused} / ${opened}`],
          ['agentd CPU over the window', `${round((used.cpuMs.agentd ?? 0) / (end - start), 2)} cores`],
        ],
        metrics: {
          push,
          hook,
          carolTurns: carolSent.size,
          windowTurns: allSent.size,
          arrived: { push: arrived(healthy.got.push, carolSent), hook: arrived(healthy.got.hook, allSent) },
          deadConnections: dead.connections(),
          refused,
          circuitsOpened: opened,
          setUpMs,
        },
        goals: [
          {
            id: 'deliveries-push-p99',
            label: "another principal's push notification lag p99, with 100 dead receivers of one principal",
            target: 1000,
            unit: 'ms',
            better: 'lower',
            value: push.p99,
          },
          {
            id: 'deliveries-webhook-p99',
            label: "the admin webhook's delivery lag p99, with 100 dead receivers of one principal",
            target: 1000,
            unit: 'ms',
            better: 'lower',
            value: hook.p99,
          },
        ],
        notes: [
          'Each receiver has its own in-flight limit and circuit (src/webhooks/targets.ts): the dead ones hold their own slots (4 each, 10 s timeouts), the looks page past their waiting deliveries, and nothing waits for a batch.',
          'Before, this benchmark on 130e08e8 (one dispatcher waiting for each batch of 16 deliveries, 10 s timeouts; quick, 20 s window): 0 of 80 push notifications and 0 of 180 webhook deliveries had arrived by the end of the grace, lags at least 25 s p50 and 35 s p99. Issue 72 measured p50 65.8 s (max 68 s) against 4 ms / 12 ms without the attack.',
        ],
      };
    } finally {
      await svc?.stop();
      await dead.close();
      await healthy.close();
    }
  },
};
