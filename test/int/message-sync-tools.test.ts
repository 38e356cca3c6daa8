/**
 * `message-sync` says which tools ran when asked (`include: ["tools"]`): the turn's calls in call order, each with its
 * server and whether it succeeded, beside the spec's `{ success, response, timestamp }`, which stays as it is when
 * not asked. Against the real service, the model simulator and the echo fixture over stdio.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { fixturePath } from '../support/paths.ts';
import { ISO_MS, useMessagingService } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const t = useMessagingService({
  mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] } },
  toolPolicy: { rules: [{ server: 'echo', tool: 'big', action: 'deny' }] },
});

beforeAll(async () => {
  await vi.waitFor(async () => {
    const { servers } = (await t.get('/api/mcp/servers')).body;
    if (servers?.[0]?.status !== 'connected') throw new Error('the echo fixture never connected');
  }, PATIENT);
});

const THREE_CALLS = 'three [[tool:echo {"message":"one"}]] [[tool:fail {}]] [[tool:big {"bytes":2}]]';

describe('message-sync with include: ["tools"]', () => {
  it('lists the tools the turn called, in call order, with their server and whether each succeeded', async () => {
    const res = await t.post('/api/message-sync', { sessionId: 'tools', message: THREE_CALLS, include: ['tools'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      response: expect.stringContaining('Tool echo returned: fixture echo: one'),
      tools: [
        { name: 'echo', server: 'echo', ok: true },
        { name: 'fail', server: 'echo', ok: false },
        { name: 'big', server: 'echo', ok: false }, // denied by the tool policy: it did not run
      ],
      timestamp: expect.stringMatching(ISO_MS),
    });
  });

  it('lists none for a turn that called no tool; the next turn lists only its own calls', async () => {
    const none = await t.post('/api/message-sync', { sessionId: 'tools', message: 'just talk', include: ['tools'] });
    expect(none.body.tools).toEqual([]);
    const next = await t.post('/api/message-sync', {
      sessionId: 'tools',
      message: 'again [[tool:echo {"message":"two"}]]',
      include: ['tools'],
    });
    expect(next.body.tools).toEqual([{ name: 'echo', server: 'echo', ok: true }]);
  });

  it("answers the spec's body alone when not asked, tools or not", async () => {
    const res = await t.post('/api/message-sync', { sessionId: 'plain', message: THREE_CALLS });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['response', 'success', 'timestamp']);
    expect((await t.post('/api/message-sync', { message: 'hi', include: [] })).body).not.toHaveProperty('tools');
  });

  it('refuses what it cannot include with INVALID_REQUEST naming the field', async () => {
    const res = await t.post('/api/message-sync', { message: 'hi', include: ['memory'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: expect.stringMatching(/^include/) },
    });
  });
});
