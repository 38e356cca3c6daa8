/**
 * What the approval race tests share (issue 23, item 7): a service whose `marker` tool waits for
 * approval and, once run, writes `<message> <epoch ms>` to a file, and a session with a call waiting.
 */
import { readFile } from 'node:fs/promises';
import { expect, vi } from 'vitest';
import { api } from './messaging.ts';
import { fixturePath } from './paths.ts';
import type { RunningApp } from './start-app.ts';
import { PATIENT } from './wait.ts';

export const askForMarker = { default: 'allow', rules: [{ server: 'marker', tool: 'mark', action: 'ask' }] };

/** The marker tool server writing to `markerFile`. */
export const markerServer = (markerFile: string) => ({
  type: 'stdio',
  command: process.execPath,
  args: [fixturePath('marker-server')],
  env: { MARKER_FILE: markerFile },
  timeout: 10_000,
});

/** Lines `<message> <epoch ms>` the marker tool wrote, by message. */
export async function marks(file: string): Promise<Map<string, number>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return new Map(
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [message = '', at = '0'] = line.split(' ');
        return [message, Number(at)] as const;
      }),
  );
}

/** Sends a message whose mark call (message: the session id) waits for approval; resolves to its callId. */
export async function pendingMark(app: Pick<RunningApp, 'url'>, sessionId: string): Promise<string> {
  const sent = await api(app.url, 'POST', '/api/message', {
    sessionId,
    message: `[[tool:mark {"message":"${sessionId}"}]]`,
  });
  expect(sent.status).toBe(200);
  return vi.waitFor(async () => {
    const { body } = await api(app.url, 'GET', `/api/sessions/${sessionId}/approvals`);
    const first = body.approvals?.[0] as { callId: string } | undefined;
    if (!first) throw new Error(`no approval pending in ${sessionId} yet`);
    return first.callId;
  }, PATIENT);
}

/** Sends `a` and `b` at once, `b` first when `bFirst`; answers in the order a, b. */
export async function together<A, B>(a: () => Promise<A>, b: () => Promise<B>, bFirst: boolean): Promise<[A, B]> {
  if (!bFirst) return Promise.all([a(), b()]);
  const [rb, ra] = await Promise.all([b(), a()]);
  return [ra, rb];
}
