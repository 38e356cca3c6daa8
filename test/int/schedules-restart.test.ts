/**
 * A schedule across a crash of agentd as users run it (the compiled service in a child process, JSONL store): killed
 * with SIGKILL inside a window of 1-second ticks and started again over the same folder, it never sends a tick twice
 * (each message carries its tick) and fires the latest missed tick once (`catchUp: last`). The schedule queues
 * (`overlap: queue`): the kill may land while a tick's turn runs, and that turn resumes after the restart, so under the
 * default `skip` the caught-up tick would rightly be recorded skipped (the unit tests hold that case).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

let sim: Simulator | undefined;
let dir = '';
const started: AgentdProcess[] = [];
beforeAll(async () => {
  sim = await startSimulator();
  dir = await mkdtemp(join(tmpdir(), 'agentd-schedule-crash-'));
});
afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

async function boot(agentFile: string): Promise<{ p: AgentdProcess; url: string }> {
  const p = runAgentd(['--agent', agentFile, '--web-port', '0']);
  started.push(p);
  return { p, url: `http://127.0.0.1:${await listeningPort(p)}` };
}
async function ticksIn(url: string): Promise<number[]> {
  const { body } = await api(url, 'GET', '/api/sessions/crash-runs/history');
  return ((body?.events ?? []) as { event: string; data: { content?: string } }[])
    .filter((f) => f.event === 'userMessage')
    .map((f) => Date.parse(f.data.content?.replace(/^tick /, '') ?? ''));
}

describe('a schedule across a crash (JSONL, agentd in a child process)', () => {
  it('after SIGKILL and a restart no tick is sent twice and the latest missed tick is fired once', async () => {
    const agentFile = await writeAgentFile({
      llm: { provider: 'openai-compatible', baseURL: sim!.url, model: 'm', apiKey: 'k' },
      storage: { type: 'jsonl', dir },
      server: roomyLimits,
      schedules: [
        {
          id: 'crash',
          everyMs: 1000,
          catchUp: 'last',
          overlap: 'queue',
          message: 'tick {{firedAt}}',
          session: 'crash-runs',
        },
      ],
    });
    const first = await boot(agentFile);
    await expect.poll(async () => (await ticksIn(first.url)).length, PATIENT).toBeGreaterThanOrEqual(2);
    first.p.child.kill('SIGKILL');
    await first.p.exited;
    const killedAt = Date.now();
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(killedAt + 2500), PATIENT); // down across two ticks
    const second = await boot(agentFile);
    const restartedAt = Date.now();
    await expect
      .poll(async () => (await ticksIn(second.url)).filter((t) => t > restartedAt).length, PATIENT)
      .toBeGreaterThanOrEqual(2);
    // The tick it caught up, as its log names it: after the kill, and sent once (its message may be stored after
    // later ticks' on a loaded machine: the recovery fires it beside the running scheduler).
    const catchUp = /"plannedAt":"([^"]+)","msg":"schedule catches up its latest missed tick"/;
    await vi.waitFor(() => expect(catchUp.exec(second.p.out()), second.p.out()).not.toBeNull(), PATIENT);
    const missed = Date.parse(catchUp.exec(second.p.out())![1]!);
    expect(missed).toBeGreaterThan(killedAt);
    await vi.waitFor(
      async () =>
        expect(
          (await ticksIn(second.url)).filter((t) => t === missed),
          second.p.out(),
        ).toHaveLength(1),
      PATIENT,
    );
    const ticks = await ticksIn(second.url);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.filter((t) => t === missed)).toHaveLength(1);
  });
});
