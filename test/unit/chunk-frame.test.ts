import { describe, expect, it } from 'vitest';
import { chunkFrame } from '../../src/agent/transient-frames.ts';
import { createChunkFrames } from '../../src/http/chunk-frame.ts';
import { frame } from '../../src/http/frames.ts';
import { asNamed } from '../../src/session-id.ts';

/** What the gateway sent for a chunk before it kept a frame's rest: the data object, named, serialized whole. */
const whole = (data: { sessionId?: string }) => frame('chunk', asNamed(data));

describe('chunk frames', () => {
  it('are byte for byte the whole data serialized, for any content, session key, turn and seq', () => {
    const chunks = createChunkFrames();
    const contents = [
      'Hello',
      '',
      ' "quoted" \\ back',
      'line\nbreak\ttab\u0000\u001f\u007f',
      'ü✓ 日本 😀',
      '\ud800 lone',
      '</script>',
    ];
    const sessions = ['default', 'a-b_c.1', '\u0000jwt:alice\u0000s1', '\u0000\u0000bare'];
    for (const sessionId of sessions)
      for (const [turnId, seq] of [
        ['t1', 0],
        ['t1', 0],
        ['t1', 7],
        ['t2', 7],
        ['t"3', 12_345_678_901],
      ] as const)
        for (const content of contents) {
          const { data } = chunkFrame(sessionId, turnId, seq, content);
          const text = chunks(data);
          expect(text).toBe(whole(data));
          expect(JSON.parse(text)).toEqual({ event: 'chunk', data: asNamed(data) });
        }
  });

  it('serialize data of another shape whole (extra, missing or reordered keys, other types)', () => {
    const chunks = createChunkFrames();
    const odd: Record<string, unknown>[] = [
      { content: 'x', sessionId: 's', turnId: 't', seq: 1, extra: true },
      { sessionId: 's', content: 'x', turnId: 't', seq: 1 },
      { content: 'x', sessionId: 's', turnId: 't' },
      { content: 'x', sessionId: 's', turnId: undefined, seq: 1 },
      { content: 1, sessionId: 's', turnId: 't', seq: 1 },
      Object.assign(Object.create({ toJSON: () => 'own' }) as object, {
        content: 'x',
        sessionId: 's',
        turnId: 't',
        seq: 1,
      }),
    ];
    for (const data of odd) expect(chunks(data)).toBe(whole(data as { sessionId?: string }));
  });

  it('serialize many sessions and turns alike', () => {
    const chunks = createChunkFrames();
    for (let i = 0; i < 3000; i++) {
      const { data } = chunkFrame(`s${i % 1500}`, `t${i}`, i, `c${i}`);
      expect(chunks(data)).toBe(whole(data));
    }
  });
});
