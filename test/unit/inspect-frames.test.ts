/** Our inspection frames are @statelyai/inspect's, and the sanitized ones hide content. */
import { createInspector } from '@statelyai/inspect';
import { configure } from 'safe-stable-stringify';
import { assign, createActor, setup, type InspectionEvent } from 'xstate';
import { describe, expect, it, vi } from 'vitest';
import { createFrames } from '../../src/inspect/index.ts';
import { PATIENT } from '../support/wait.ts';

const stringify = configure({ maximumDepth: 10 });
const machine = setup({
  types: {
    context: {} as { count: number; content: string },
    events: {} as { type: 'TOGGLE'; content: string } | { type: 'chunk'; content: string },
  },
}).createMachine({
  id: 'toggle',
  context: { count: 0, content: 'hello' },
  initial: 'off',
  states: {
    off: {
      on: {
        TOGGLE: {
          target: 'on',
          actions: assign({ count: ({ context }) => context.count + 1, content: ({ event }) => event.content }),
        },
      },
    },
    on: { on: { TOGGLE: 'off', chunk: {} } },
  },
});
const withoutTime = (frames: unknown[]) => frames.map((f) => ({ ...(f as object), createdAt: undefined }));

describe('inspection frames', () => {
  it('equal the @statelyai/inspect converter output (content on)', async () => {
    const theirs: unknown[] = [];
    const inspector = createInspector({
      start() {},
      stop() {},
      send: (e: unknown) => theirs.push(JSON.parse(stringify(e) ?? 'null')),
    });
    const ours: unknown[] = [];
    const frames = createFrames({ content: true, redact: (x) => x });
    let converting = 0;
    const converted = () => vi.waitFor(() => expect(converting).toBe(0), PATIENT);
    // Both convert on a later tick, as the hub does: an actor's snapshot cannot be read while it is created.
    const actor = createActor(machine, {
      inspect: (ev) => {
        inspector.inspect.next?.(ev);
        converting++;
        setTimeout(() => {
          const frame = frames.fromInspection(ev);
          if (frame) ours.push(JSON.parse(JSON.stringify(frame)));
          converting--;
        }, 0);
      },
    });
    actor.start();
    await converted();
    actor.send({ type: 'TOGGLE', content: 'secret prompt' });
    await converted();
    expect(ours.length).toBeGreaterThanOrEqual(4);
    expect(withoutTime(ours)).toEqual(withoutTime(theirs));
  });

  it('hide content and chunk events unless content is opted in, and redact secrets', () => {
    const ours: { type: string; event?: { type: string } }[] = [];
    const frames = createFrames({
      content: false,
      redact: (x) => JSON.parse(JSON.stringify(x).replaceAll('sk-live-123', '[REDACTED]')) as typeof x,
    });
    const events: InspectionEvent[] = [];
    const actor = createActor(machine, { inspect: (ev) => void events.push(ev) });
    actor.start();
    actor.send({ type: 'TOGGLE', content: 'my prompt with sk-live-123' });
    actor.send({ type: 'chunk', content: 'a piece of the reply' });
    for (const ev of events) {
      const frame = frames.fromInspection(ev);
      if (frame) ours.push(frame);
    }
    const text = JSON.stringify(ours);
    expect(text).not.toContain('my prompt');
    expect(text).not.toContain('a piece of the reply');
    expect(text).toContain('[content]');
    expect(ours.some((f) => f.event?.type === 'chunk')).toBe(false);
    expect(ours.some((f) => f.type === '@xstate.snapshot' && f.event?.type === 'TOGGLE')).toBe(true);
    const secret = createFrames({
      content: true,
      redact: (x) => JSON.parse(JSON.stringify(x).replaceAll('sk-live-123', '[REDACTED]')) as typeof x,
    });
    expect(JSON.stringify(secret.snapshotFrame(actor))).toContain('[REDACTED]');
    expect(JSON.stringify(secret.snapshotFrame(actor))).not.toContain('sk-live-123');
  });
});
