/**
 * The seam of `subscribe{since}` (src/http/ws-seam.ts) on the real bus, beside a topic that works as the gateway's:
 * every session event is published to it, and the connection hears it only once it joined. What the connection
 * received is what a WebSocket client would see.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/index.ts';
import type { FrontCommands, FrontEvents } from '../../src/http/front-bus.ts';
import { createSessionFrames, isSessionEvent } from '../../src/http/session-frames.ts';
import { openSeam } from '../../src/http/ws-seam.ts';
import { facts, stored } from '../support/facts.ts';

function given(since = 0) {
  const bus = createBus<FrontCommands, FrontEvents>({ log: pino({ level: 'silent' }) });
  const frameOf = createSessionFrames();
  const received: { event: string; seq: number | undefined; via: 'seam' | 'topic' }[] = [];
  const got = (text: string, via: 'seam' | 'topic') => {
    const { event, data } = JSON.parse(text) as { event: string; data: { seq?: number } };
    received.push({ event, seq: data.seq, via });
  };
  let joined = false;
  bus.onAny((e) => {
    const text = joined && isSessionEvent(e) ? frameOf(e) : undefined;
    if (text !== undefined) got(text, 'topic');
  });
  const seam = openSeam({
    bus,
    sessionId: 's',
    since,
    frameOf,
    send: (text) => got(text, 'seam'),
    goLive: () => void (joined = true),
  });
  const response = (seq: number) =>
    bus.emit('agent.stored', stored(facts.response(`t${seq}`, `r${seq}`), seq, new Date(0).toISOString()));
  const chunk = (seq: number) => bus.emit('agent.chunk', { content: 'c', sessionId: 's', turnId: `t${seq}`, seq });
  const seqs = () => received.map((r) => `${r.event}:${r.seq}:${r.via}`);
  return { bus, seam, response, chunk, seqs, joined: () => joined };
}

describe('the seam between a replay and the live topic', () => {
  it('drops the late live copy of a frame the replay sent, and stays off the topic until a newer one', async () => {
    const { seam, response, seqs, joined } = given();
    seam.replayed(2); // the replay read seq 2 before its live copy came
    seam.caughtUp();
    response(2);
    await Promise.resolve();
    expect(joined()).toBe(false);
    response(4);
    response(6); // in the same tick as 4: the seam still sends it
    await Promise.resolve();
    expect(joined()).toBe(true);
    response(8);
    expect(seqs()).toEqual(['response:4:seam', 'response:6:seam', 'response:8:topic']);
  });

  it('sends what was heard during the replay and not read by it, after the replayed frames, then joins', async () => {
    const { seam, response, chunk, seqs, joined } = given();
    response(2); // heard while the replay reads; the read gives it too
    response(4); // stored after the replay's last read
    chunk(4);
    seam.replayed(2);
    seam.caughtUp();
    expect(seqs()).toEqual(['response:4:seam', 'chunk:4:seam']);
    await Promise.resolve();
    expect(joined()).toBe(true);
  });

  it('lets a chunk repeating the last replayed seq pass, and drops anything older than what the client has', () => {
    const { seam, response, chunk, seqs } = given(5);
    seam.caughtUp();
    response(3);
    chunk(5);
    expect(seqs()).toEqual(['chunk:5:seam']);
  });

  it('closed, it sends nothing more and never joins', async () => {
    const { seam, response, seqs, joined } = given();
    seam.caughtUp();
    seam.close();
    response(2);
    await Promise.resolve();
    expect(seqs()).toEqual([]);
    expect(joined()).toBe(false);
  });
});
