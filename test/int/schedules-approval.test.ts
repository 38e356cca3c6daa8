/**
 * A scheduled run that meets a tool approval, as a user runs it (issue 61): a 1-second schedule whose message calls
 * `echo`, which the tool policy asks about. The run waits, durably (agentd is restarted over its JSONL folder while
 * it waits); a real HTTP receiver hears `question.asked`; `overlap: skip` records the ticks meanwhile `skipped`; the
 * approval answered over REST lets the run finish, and the runs list shows it `finished` with its usage.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { api, everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-schedule-approval-');
const SESSION = 'nightly-runs';

interface Hook {
  type: string;
  data: { sessionId: string; turnId?: string; kind?: string; toolName?: string; questionId?: string };
}

const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

/** A webhook receiver on loopback that accepts everything; the events it received, in order. */
async function receiver() {
  const events: Hook[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      events.push(JSON.parse(body) as Hook);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, events };
}

interface Run {
  status: string;
  plannedAt: string;
  turnId?: string;
  session?: string;
  finishedAt?: string;
  usage?: unknown;
}
const runsOf = async (app: RunningApp): Promise<Run[]> =>
  (await api(app.url, 'GET', '/api/schedules/nightly/runs')).body.runs as Run[];

/** The one approval the session waits for. */
const pendingApproval = (app: RunningApp) =>
  vi.waitFor(async () => {
    const { approvals } = (await api(app.url, 'GET', `/api/sessions/${SESSION}/approvals`)).body as {
      approvals: { callId: string; turnId: string; toolName: string }[];
    };
    if (approvals.length !== 1) throw new Error(`${approvals.length} approvals pending, not 1`);
    return approvals[0]!;
  }, PATIENT);

describe('a scheduled run meets an approval', () => {
  it('waits across a restart, its question.asked webhook is heard, ticks are skipped meanwhile, and the REST answer finishes it', async () => {
    const rx = await receiver();
    const doc = {
      storage: { type: 'jsonl', dir: env.dir },
      server: roomyLimits,
      llm: { timeoutMs: 10_000 },
      mcpServers: { everything: everythingStdio },
      toolPolicy: { default: 'allow', rules: [{ server: 'everything', tool: 'echo', action: 'ask' }] },
      webhooks: [
        {
          id: 'people',
          url: rx.url,
          events: ['question.asked', 'turn.completed'],
          secret: `whsec_${randomBytes(32).toString('base64')}`,
          retryScheduleMs: [200, 200, 200],
        },
      ],
      schedules: [
        {
          id: 'nightly',
          everyMs: 1000,
          message: 'tick {{firedAt}} [[tool:echo {"message":"scheduled"}]]',
          session: SESSION,
        },
      ],
    };
    const first = await env.apps.start(doc, { modelUrl: env.sim.url });
    const asked = await pendingApproval(first);
    expect(asked.toolName).toBe('echo');
    // The receiver is told that the scheduled run waits for a person.
    await expect
      .poll(() => rx.events.find((e) => e.type === 'question.asked')?.data, PATIENT)
      .toMatchObject({ sessionId: SESSION, turnId: asked.turnId, kind: 'approval', toolName: 'echo' });
    // overlap: skip holds the ticks while the run waits.
    await expect
      .poll(async () => (await runsOf(first)).filter((r) => r.status === 'skipped').length, PATIENT)
      .toBeGreaterThanOrEqual(2);
    const waiting = (await runsOf(first)).find((r) => r.turnId === asked.turnId);
    expect(waiting).toMatchObject({ status: 'sent', session: SESSION });

    // Durably: agentd stops while the run waits, and the next one still holds the question and the ticks.
    await env.apps.stop(first);
    const second = await env.apps.start(doc, { modelUrl: env.sim.url });
    const restartedAt = new Date().toISOString();
    expect(await pendingApproval(second)).toEqual(asked);
    await expect
      .poll(
        async () => (await runsOf(second)).filter((r) => r.status === 'skipped' && r.plannedAt > restartedAt).length,
        PATIENT,
      )
      .toBeGreaterThanOrEqual(1);
    // Every tick since the first was skipped: the one run sent is the one waiting.
    const sent = (await runsOf(second)).filter((r) => r.turnId !== undefined);
    expect(sent.map((r) => [r.turnId, r.status])).toEqual([[asked.turnId, 'sent']]);

    const answered = await api(second.url, 'POST', `/api/sessions/${SESSION}/approvals/${asked.callId}`, {
      decision: 'approve',
    });
    expect(answered.status).toBe(200);
    await expect
      .poll(async () => (await runsOf(second)).find((r) => r.turnId === asked.turnId), PATIENT)
      .toMatchObject({ status: 'finished', finishedAt: expect.any(String), usage: expect.any(Object) });
    await expect
      .poll(() => rx.events.filter((e) => e.type === 'turn.completed').map((e) => e.data.turnId), PATIENT)
      .toContain(asked.turnId);
    // The next tick fires again once the run ended (and waits at its own approval).
    await expect
      .poll(async () => (await runsOf(second)).filter((r) => r.turnId !== undefined).length, PATIENT)
      .toBeGreaterThanOrEqual(2);
    expect((await api(second.url, 'PATCH', '/api/schedules/nightly', { paused: true })).status).toBe(200);
  });
});
