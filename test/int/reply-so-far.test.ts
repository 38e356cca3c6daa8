/**
 * No text lost to a gap (issue 73): a WebSocket client that subscribes while a turn streams its reply (a follower
 * joining late, a page reloaded, a reconnect resuming with `since`) first gets `replySoFar`, the text streamed so far,
 * then the live chunks: the text it shows (`joinText`) before the `response` comes is already `response.content`.
 * The simulated model streams slowly (`[[rate]]`), so the subscribe lands mid-reply.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { joinText } from '../../src/client/frames.ts';
import { everythingStdio, roomyLimits, turnFrames, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type Frame, type WsClient } from '../support/ws-client.ts';

/** A message with this says something, then calls a tool, in its first model step (the second is its directives'). */
const TWO_STEPS = 'two steps';
const env = useSimulatorAndFolder('agentd-reply-so-far-', {
  script: (body) => {
    const last = body.messages.at(-1);
    if (last?.role !== 'user' || !JSON.stringify(last.content).includes(TWO_STEPS)) return undefined;
    return { text: 'Let me add.', toolCalls: [{ name: 'get-sum', arguments: '{"a":1,"b":2}' }], tokensPerSec: 40 };
  },
});
const slowReply = (marker: string) => `${marker} [[len:80]] [[rate:20]]`;

/** The text a follower shows just before the turn's `response`, and that response's content. */
function joined(frames: Frame[]): { shown: string; content: unknown } {
  const end = frames.findIndex((f) => f.event === 'response');
  expect(end, frames.map((f) => f.event).join(' ')).toBeGreaterThan(0);
  const shown = frames.slice(0, end).reduce((text, f) => joinText(text, f), '');
  return { shown, content: frames[end]?.data.content };
}

const chunksOf = (ws: WsClient, sessionId: string) =>
  ws.frames.filter((f) => f.event === 'chunk' && f.data.sessionId === sessionId).length;
const eventsOf = (frames: Frame[]) => frames.map((f) => f.event).filter((e, i, all) => e !== all[i - 1]);

describe('a subscribe mid-reply gets the reply so far, then the live chunks', { timeout: 60_000 }, () => {
  let app: RunningApp;
  const clients: WsClient[] = [];
  afterAll(() => {
    for (const c of clients) c.close();
  });
  const client = async () => {
    app ??= await env.apps.start(
      { mcpServers: { everything: everythingStdio }, server: roomyLimits, llm: { timeoutMs: 10_000 } },
      { modelUrl: env.sim.url },
    );
    const c = await connectWs(app.wsUrl);
    clients.push(c);
    return c;
  };

  it('a late follower, a new connection resuming with since, and the same connection subscribing again all join', async () => {
    const sender = await client();
    sender.send({ type: 'message', sessionId: 'mid', content: slowReply('one') });
    await until(() => chunksOf(sender, 'mid') >= 5, 'the reply streams');
    const late = await client();
    late.send({ type: 'subscribe', sessionId: 'mid' });
    const resumed = await client();
    resumed.send({ type: 'subscribe', sessionId: 'mid', since: 0 });
    const from = sender.frames.length;
    await until(() => chunksOf(sender, 'mid') >= 10, 'the reply streams on');
    sender.send({ type: 'subscribe', sessionId: 'mid', since: sender.frames.at(-1)!.data.seq as number });

    const fromSender = await turnFrames(sender, 'mid', 0);
    const fromLate = await turnFrames(late, 'mid', 0);
    const fromResumed = await turnFrames(resumed, 'mid', 0);
    const { content } = joined(fromSender);
    expect(content).toMatch(/lorem/);
    for (const frames of [fromSender, fromLate, fromResumed]) {
      expect(
        frames.filter((f) => f.event === 'replySoFar'),
        eventsOf(frames).join(' '),
      ).toHaveLength(1);
      expect(joined(frames).shown).toBe(content);
    }
    // The late follower: the reply so far first (its own seq, the text streamed before it came), then chunks.
    expect(eventsOf(fromLate)).toEqual(['replySoFar', 'chunk', 'response']);
    expect(fromLate[0]!.data).toMatchObject({ sessionId: 'mid', turnId: fromSender[0]!.data.turnId });
    expect((fromLate[0]!.data.content as string).length).toBeGreaterThan(0);
    // The replay of since first, then the reply so far, then the live chunks.
    expect(eventsOf(fromResumed)).toEqual(['userMessage', 'replySoFar', 'chunk', 'response']);
    // The sender's own subscribe again: the reply so far stands in place of what its chunks had built.
    const again = sender.frames.slice(from).filter((f) => f.data.sessionId === 'mid');
    expect(again.filter((f) => f.event === 'replySoFar')).toHaveLength(1);
  });

  it('a turn of two model steps: the reply so far holds the text of the first too', async () => {
    const sender = await client();
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    sender.send({ type: 'message', sessionId: 'steps', content: `${TWO_STEPS} [[reply:${words}]] [[rate:20]]` });
    await until(() => sender.frames.some((f) => f.event === 'toolResult'), 'the tool ran');
    const from = sender.frames.length;
    await until(() => sender.frames.slice(from).some((f) => f.event === 'chunk'), 'the second step streams');
    const late = await client();
    late.send({ type: 'subscribe', sessionId: 'steps' });
    const fromSender = await turnFrames(sender, 'steps', 0);
    const fromLate = await turnFrames(late, 'steps', 0);
    const { content } = joined(fromSender);
    expect(content).toMatch(/^Let me add\.\n\nword0 /);
    expect(fromLate[0]).toMatchObject({ event: 'replySoFar' });
    expect(fromLate[0]!.data.content).toMatch(/^Let me add\.\n\nword0/);
    expect(joined(fromLate).shown).toBe(content);
  });

  it('nothing is sent when no reply streams', async () => {
    const idle = await client();
    idle.send({ type: 'subscribe', sessionId: 'mid' });
    idle.send({ type: 'subscribe', sessionId: 'mid', since: 0 });
    idle.send({ type: 'ping' }); // answered after both subscribes (a connection's frames are handled in order)
    await idle.next((f) => f.event === 'pong');
    expect(idle.frames.some((f) => f.event === 'response' && f.data.sessionId === 'mid')).toBe(true); // replayed
    expect(idle.frames.filter((f) => f.event === 'replySoFar')).toEqual([]);
  });
});
