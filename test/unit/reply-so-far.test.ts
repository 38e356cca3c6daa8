/**
 * The reply a session's turn streamed so far (src/agent/follow/reply-so-far.ts), folded from the bus, and the seam of
 * `subscribe{since}` sending it once caught up (src/http/ws-seam.ts): the text a late subscriber joins (`replySoFar`,
 * then the chunks after it) is the reply.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { REPLY_SEED_EVENT } from '../../src/agent/frames.ts';
import { createReplyTracker } from '../../src/agent/follow/reply-so-far.ts';
import { createBus } from '../../src/bus/index.ts';
import { joinText } from '../../src/client/frames.ts';
import type { FrontCommands, FrontEvents } from '../../src/http/front-bus.ts';
import { createSessionFrames, isSessionEvent } from '../../src/http/session-frames.ts';
import { openSeam } from '../../src/http/ws-seam.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { facts, stored } from '../support/facts.ts';

function given() {
  const bus = createBus<FrontCommands, FrontEvents>({ log: pino({ level: 'silent' }) });
  const replies = createReplyTracker(bus);
  const chunk = (content: string, seq = 1, turnId = 't1') =>
    bus.emit('agent.chunk', { content, sessionId: 's', turnId, seq });
  const fact = (event: SessionEvent, seq: number) =>
    bus.emit('agent.stored', stored(event, seq, new Date(0).toISOString()));
  return { bus, replies, chunk, fact };
}

describe('the reply so far', () => {
  it('appends chunks, starts over for another turn, and is forgotten at the turn end', () => {
    const { replies, chunk, fact } = given();
    expect(replies.of('s')).toBeUndefined();
    chunk('Hel');
    chunk('lo', 2);
    expect(replies.of('s')).toEqual({ sessionId: 's', turnId: 't1', seq: 2, content: 'Hello' });
    fact(facts.call('t1', 'c1'), 3); // a fact of the turn moves its seq
    expect(replies.of('s')).toMatchObject({ seq: 3, content: 'Hello' });
    fact(facts.response('t1', 'Hello'), 4);
    expect(replies.of('s')).toBeUndefined();
    chunk('New', 4, 't2');
    expect(replies.of('s')).toMatchObject({ turnId: 't2', content: 'New' });
    fact(facts.failed('t2', 'cancelled'), 5);
    expect(replies.of('s')).toBeUndefined();
  });

  it('a resumed turn replaces it; a seed replaces or forgets it; a fact not newer than it is passed over', () => {
    const { bus, replies, chunk, fact } = given();
    chunk('cut sh');
    fact(facts.resumed('t1', 'Earlier'), 2);
    chunk(' and on', 2);
    expect(replies.of('s')?.content).toBe('Earlier and on');
    bus.emit(REPLY_SEED_EVENT, { sessionId: 's', reply: { sessionId: 's', turnId: 't1', seq: 6, content: 'Seeded' } });
    fact(facts.resumed('t1', 'Read back'), 5); // older than the seed (a gap the cluster read back)
    chunk('!', 6);
    expect(replies.of('s')?.content).toBe('Seeded!');
    expect(replies.seedOf('s')).toEqual({
      sessionId: 's',
      reply: { sessionId: 's', turnId: 't1', seq: 6, content: 'Seeded!' },
    });
    bus.emit(REPLY_SEED_EVENT, { sessionId: 's', reply: null });
    expect(replies.of('s')).toBeUndefined();
    expect(replies.seedOf('s')).toEqual({ sessionId: 's', reply: null });
  });
});

describe('the seam sends the reply so far once caught up', () => {
  function seamOf(since: number) {
    const g = given();
    const frameOf = createSessionFrames();
    const received: { event: string; data: { seq?: number; content?: string } }[] = [];
    let joined = false;
    g.bus.onAny((e) => {
      const text = joined && isSessionEvent(e) ? frameOf(e) : undefined;
      if (text !== undefined) received.push(JSON.parse(text) as (typeof received)[number]);
    });
    const seam = openSeam({
      bus: g.bus,
      sessionId: 's',
      since,
      frameOf,
      send: (text) => received.push(JSON.parse(text) as (typeof received)[number]),
      goLive: () => void (joined = true),
      replySoFar: () => g.replies.of('s'),
    });
    const text = () => received.reduce((t, f) => joinText(t, f), '');
    return { ...g, seam, received, text };
  }

  it('held chunks are not sent: their text is in the replySoFar after the held facts; live chunks follow', async () => {
    const { seam, chunk, fact, received, text } = seamOf(0);
    chunk('Hel', 0); // before the subscribe (its text is in the reply so far)
    fact(facts.user('t1'), 1); // read by the replay too
    chunk('lo', 1);
    fact(facts.call('t1', 'c1'), 2); // stored after the replay's last read
    chunk(' wor', 2);
    seam.replayed(1);
    seam.caughtUp();
    chunk('ld', 2);
    await Promise.resolve();
    chunk('!', 2);
    expect(received.map((f) => f.event)).toEqual(['toolCall', 'replySoFar', 'chunk', 'chunk']);
    expect(text()).toBe('Hello world!');
  });

  it('a live chunk older than the replay (relayed late) is text the reply so far lacks, unless its turn ended', () => {
    const { seam, chunk, received, text } = seamOf(0);
    chunk('Hel', 1);
    seam.replayed(2); // a fact of the turn the store gave before its relayed chunks came
    seam.caughtUp();
    chunk('lo', 1);
    chunk('!', 2);
    expect(received.map((f) => f.event)).toEqual(['replySoFar', 'chunk', 'chunk']);
    expect(text()).toBe('Hello!');
    const ended = seamOf(0);
    ended.seam.replayed(2, 't1');
    ended.seam.caughtUp();
    ended.chunk('late', 1);
    expect(ended.received).toEqual([]);
  });

  it('sends none when the replay held the turn end (stored before its live copy), nor when no reply streams', () => {
    const { seam, chunk, received } = seamOf(0);
    chunk('Hello', 1);
    seam.replayed(2, 't1'); // its response
    seam.caughtUp();
    expect(received).toEqual([]);
    const idle = seamOf(0);
    idle.seam.caughtUp();
    expect(idle.received).toEqual([]);
  });
});
