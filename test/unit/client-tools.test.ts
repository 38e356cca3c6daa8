/**
 * The client's answerer of client tool calls (src/client/client-tools.ts) against a fake REST api: each call is run
 * once however often it is offered; an answer that got no reply is sent again, after a reconnect's recheck when the
 * attempts ran out; 409 and 404 end it quietly; another refusal goes to `fail`; a tool without a handler and a throw
 * are answered as failed.
 */
import { describe, expect, it } from 'vitest';
import { createToolAnswerer, type ClientToolCall, type ToolContext } from '../../src/client/client-tools.ts';
import { AgentdError } from '../../src/client/index.ts';

type Body = { content: string; error?: string };

/** Lets every pending promise reaction run (setImmediate comes after the microtasks). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function fakeContext(refusals: AgentdError[] = []) {
  const answers: { callId: string; body: Body }[] = [];
  const pending: ClientToolCall[] = [];
  const api = {
    answerClientTool: ({ callId, body }: { callId: string; body: Body }) => {
      const refusal = refusals.shift();
      if (refusal) return Promise.reject(refusal);
      answers.push({ callId, body });
      return Promise.resolve({ sessionId: 's', callId, success: body.error === undefined, timestamp: '' });
    },
    listClientTools: () => Promise.resolve({ sessionId: 's', clientTools: pending, timestamp: '' }),
  };
  const ctx = {
    api,
    options: { baseUrl: 'http://x', reconnect: { initialDelayMs: 1, maxDelayMs: 1, maxAttempts: 2 } },
    chatTurns: new Set<string>(),
  } as unknown as ToolContext;
  return { ctx, answers, pending };
}

const lost = () => new AgentdError(0, 'NETWORK_ERROR', 'No answer');
const call = (callId: string, toolName = 'locate'): ClientToolCall => ({ callId, toolName, turnId: 't1', args: {} });

describe('createToolAnswerer', () => {
  it('runs a call once; an answer lost beyond the attempts is sent again by the recheck after a reconnect', async () => {
    const refusals = [lost(), lost(), lost()];
    const { ctx, answers, pending } = fakeContext(refusals);
    let runs = 0;
    const failures: unknown[] = [];
    const answerer = createToolAnswerer(
      ctx,
      's',
      { locate: () => `here ${++runs}` },
      {
        signal: new AbortController().signal,
        mine: (c) => c.turnId === 't1',
        fail: (err) => failures.push(err),
      },
    );
    answerer.offer(call('c1'));
    answerer.offer(call('c1')); // a replayed frame: nothing runs twice
    answerer.offer({ ...call('c2'), turnId: 'other' }); // another turn's call: not this answerer's
    await expect.poll(() => refusals.length).toBe(0); // 1 + maxAttempts tries, then it waits for a recheck
    await settle();
    expect(answers).toEqual([]);
    pending.push(call('c1'));
    answerer.recheck();
    await expect.poll(() => answers).toEqual([{ callId: 'c1', body: { content: 'here 1' } }]);
    answerer.offer(call('c1'));
    answerer.recheck();
    expect(runs).toBe(1);
    expect(failures).toEqual([]);
  });

  it('409 and 404 end a call quietly; another refusal fails; a throw and an unknown tool answer as failed', async () => {
    const refused = new AgentdError(403, 'FORBIDDEN', 'no');
    const { ctx, answers } = fakeContext([
      new AgentdError(409, 'APPROVAL_ALREADY_RESOLVED', 'done'),
      new AgentdError(404, 'APPROVAL_NOT_FOUND', 'gone'),
      refused,
    ]);
    const failures: unknown[] = [];
    const answerer = createToolAnswerer(
      ctx,
      's',
      {
        locate: () => {
          throw new Error('no GPS fix');
        },
      },
      { signal: new AbortController().signal, mine: () => true, fail: (err) => failures.push(err) },
    );
    for (const id of ['a', 'b', 'c']) answerer.offer(call(id));
    await expect.poll(() => failures).toEqual([refused]);
    answerer.offer(call('d'));
    answerer.offer(call('e', 'weather'));
    await expect.poll(() => answers.length).toBe(2);
    expect(answers).toEqual([
      { callId: 'd', body: { content: '', error: 'no GPS fix' } },
      { callId: 'e', body: { content: '', error: 'No tool "weather" is run by this client' } },
    ]);
  });
});
