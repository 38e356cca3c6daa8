/**
 * Elicitations across a restart (JSONL store): a question cannot outlive the process that holds the
 * server's request. Stopped gracefully, its turn ends and closes it; a log a crash left with one
 * pending is closed as `cancel` by `restart` when the session opens again.
 */
import { appendFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT, until } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-elicit-restart-');

const boot = (): Promise<RunningApp> =>
  env.apps.start(
    {
      storage: { type: 'jsonl', dir: env.dir },
      mcpServers: { everything: { ...everythingStdio, timeout: 60_000 } },
      server: roomyLimits,
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
const pending = async (app: RunningApp, sessionId: string) =>
  (await api(app.url, 'GET', `/api/sessions/${sessionId}/elicitations`)).body.elicitations as { id: string }[];

describe('elicitations across a restart', () => {
  it('a question open at shutdown cannot be answered after the restart', async () => {
    const first = await boot();
    await api(first.url, 'POST', '/api/message', {
      sessionId: 'asked',
      message: 'ask [[tool:trigger-elicitation-request {}]]',
    });
    await until(async () => (await pending(first, 'asked')).length === 1, 'a question pending');
    const [question] = await pending(first, 'asked');
    await env.apps.stop(first);

    const second = await boot();
    expect(await pending(second, 'asked')).toEqual([]);
    const late = await api(second.url, 'POST', `/api/sessions/asked/elicitations/${question!.id}`, {
      action: 'decline',
    });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('ELICITATION_ALREADY_RESOLVED');
    await env.apps.stop(second);
  });

  it('a question a crash left pending in the log is cancelled by restart when its session opens', async () => {
    const first = await boot();
    await api(first.url, 'POST', '/api/message-sync', { sessionId: 'crashed', message: 'hello' });
    await env.apps.stop(first);
    const file = (await readdir(env.dir)).find((f) => f.includes('crashed'));
    const asked = {
      v: 4,
      type: 'questionAsked',
      turnId: 't-lost',
      question: {
        id: 'el_lost',
        kind: 'elicitation',
        callId: 'call_lost',
        serverId: 'everything',
        message: 'Name?',
        mode: 'form',
        requestedSchema: { type: 'object' },
        expiresAt: '2030-01-01T00:00:00.000Z',
      },
    };
    await appendFile(
      join(env.dir, file!),
      `${JSON.stringify({ seq: 3, ts: '2026-01-01T00:00:00.000Z', sessionId: 'crashed', event: asked })}\n`,
    );

    const second = await boot();
    expect(await pending(second, 'crashed')).toEqual([]);
    // Opening the session (the listing above did) records the resolution.
    const lastTwo = async () =>
      (
        (await api(second.url, 'GET', '/api/sessions/crashed/history')).body.events as {
          event: string;
          data: Record<string, unknown>;
        }[]
      )
        .slice(-2)
        .map((f) => [f.event, f.data.id, f.data.action, f.data.by]);
    await expect.poll(lastTwo, PATIENT).toEqual([
      ['elicitationRequested', 'el_lost', undefined, undefined],
      ['elicitationResolved', 'el_lost', 'cancel', 'restart'],
    ]);
  });
});
