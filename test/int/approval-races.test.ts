/**
 * Approve versus cancel and approve versus reset, raced through the real server (issue 23, item 7),
 * many times over on the JSONL store. Every run must hold:
 * - the tool runs only for an approval that answered 200 (one that lost answers 404 or 409);
 * - the turn ends exactly once in the log, and nothing of it is stored after its end;
 * - after a reset nothing of the old turn is stored after the `conversationReset`, and the next
 *   message's model request holds no history;
 * - the session takes the next message.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askForMarker, markerServer, marks, pendingMark, together } from '../support/approval-race.ts';
import { api, lastMessagesWith, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';

const ITERATIONS = 16;
const env = useSimulatorAndFolder('agentd-approval-races-');

interface Frame {
  event: string;
  data: { turnId?: string; seq: number; [key: string]: unknown };
}

async function boot(markerFile: string): Promise<RunningApp> {
  return env.apps.start(
    {
      mcpServers: { marker: markerServer(markerFile) },
      toolPolicy: askForMarker,
      storage: { type: 'jsonl', dir: `${markerFile}-sessions` }, // a folder per service: one holds it at a time
      server: roomyLimits,
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
}

const history = async (app: RunningApp, sessionId: string): Promise<Frame[]> =>
  (await api(app.url, 'GET', `/api/sessions/${sessionId}/history`)).body.events;
const ends = (frames: Frame[], turnId: string) =>
  frames.filter((f) => f.data.turnId === turnId && (f.event === 'response' || f.event === 'error'));

/** The turn of the race's message: ended exactly once, with nothing of it after its end. */
async function settledTurn(app: RunningApp, sessionId: string): Promise<{ frames: Frame[]; turnId: string }> {
  let frames: Frame[] = [];
  let turnId = '';
  await until(async () => {
    frames = await history(app, sessionId);
    turnId = frames.find((f) => f.event === 'userMessage')?.data.turnId ?? '';
    return ends(frames, turnId).length > 0;
  }, `the raced turn of ${sessionId} ends`);
  // Give a straggler every chance: the next message's turn goes through the session after it.
  const next = await api(app.url, 'POST', '/api/message-sync', { sessionId, message: `next-${sessionId}` });
  expect(next.status, `${sessionId}: the session takes the next message`).toBe(200);
  frames = await history(app, sessionId);
  const end = ends(frames, turnId);
  expect(end, `${sessionId}: the turn ends once`).toHaveLength(1);
  const after = frames.filter((f) => f.data.turnId === turnId && f.data.seq > end[0]!.data.seq);
  expect(after, `${sessionId}: nothing of the turn after its end`).toEqual([]);
  return { frames, turnId };
}

function expectToolOnlyIfApproved(ran: Map<string, number>, sessionId: string, approve: number) {
  if (approve !== 200)
    expect(ran.has(sessionId), `${sessionId}: the tool ran though its approval was refused (${approve})`).toBe(false);
}

describe('approve versus cancel', () => {
  it(`the tool runs only for a successful approval, and the turn ends once (${ITERATIONS} races)`, async () => {
    const markerFile = join(env.dir, 'marks-cancel');
    const app = await boot(markerFile);
    const outcomes: { sessionId: string; approve: number; cancelled: boolean }[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const sessionId = `cancel-${i}`;
      const callId = await pendingMark(app, sessionId);
      const [approved, cancelled] = await together(
        () => api(app.url, 'POST', `/api/sessions/${sessionId}/approvals/${callId}`, { decision: 'approve' }),
        () => api(app.url, 'POST', `/api/sessions/${sessionId}/cancel`),
        i % 2 === 1,
      );
      expect(cancelled.status).toBe(200);
      expect([200, 404, 409]).toContain(approved.status);
      outcomes.push({ sessionId, approve: approved.status, cancelled: cancelled.body.cancelled });
      await settledTurn(app, sessionId);
    }
    const ran = await marks(markerFile);
    for (const o of outcomes) expectToolOnlyIfApproved(ran, o.sessionId, o.approve);
    console.info(
      `[approval-races cancel] ${JSON.stringify({ approved: outcomes.filter((o) => o.approve === 200).length, toolRan: outcomes.filter((o) => ran.has(o.sessionId)).length })}`,
    );
  }, 240_000);
});

describe('approve versus reset', () => {
  it(`nothing of the old turn is stored after the reset, and the next turn starts from an empty history (${ITERATIONS} races)`, async () => {
    const markerFile = join(env.dir, 'marks-reset');
    const app = await boot(markerFile);
    const outcomes: { sessionId: string; approve: number }[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const sessionId = `reset-${i}`;
      const callId = await pendingMark(app, sessionId);
      const [approved, reset] = await together(
        () => api(app.url, 'POST', `/api/sessions/${sessionId}/approvals/${callId}`, { decision: 'approve' }),
        () => api(app.url, 'POST', '/api/reset', { sessionId }),
        i % 2 === 1,
      );
      expect(reset.status).toBe(200);
      expect([200, 404, 409]).toContain(approved.status);
      outcomes.push({ sessionId, approve: approved.status });
      const { frames, turnId } = await settledTurn(app, sessionId);
      const resetAt = frames.find((f) => f.event === 'conversationReset')!.data.seq;
      expect(
        frames.filter((f) => f.data.turnId === turnId && f.data.seq > resetAt),
        `${sessionId}: the old turn wrote after the reset`,
      ).toEqual([]);
      expect(lastMessagesWith(env.sim, `next-${sessionId}`).map((m) => m.role)).toEqual(['system', 'user']);
    }
    const ran = await marks(markerFile);
    for (const o of outcomes) expectToolOnlyIfApproved(ran, o.sessionId, o.approve);
    console.info(
      `[approval-races reset] ${JSON.stringify({ approved: outcomes.filter((o) => o.approve === 200).length, toolRan: outcomes.filter((o) => ran.has(o.sessionId)).length })}`,
    );
  }, 240_000);
});
