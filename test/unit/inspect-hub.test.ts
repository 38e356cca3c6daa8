/** The inspection hub: no watching without viewers, late join, the live stream, filters, backpressure. */
import { createActor, setup } from 'xstate';
import { describe, expect, it, vi } from 'vitest';
import { createInspectHub } from '../../src/inspect/index.ts';
import { PATIENT } from '../support/wait.ts';

const machine = setup({}).createMachine({
  id: 'light',
  initial: 'green',
  states: { green: { on: { NEXT: 'yellow' } }, yellow: { on: { NEXT: 'red' } }, red: {} },
});
type Frame = { type: string; name?: string; sessionId?: string; snapshot?: { value?: string } };

function viewer(accept = () => true) {
  const frames: Frame[] = [];
  return { frames, send: (text: string) => (frames.push(JSON.parse(text) as Frame), accept()) };
}

function given() {
  const hub = createInspectHub({ content: false, redact: (x) => x });
  const a = createActor(machine, { id: 'turn:a' }).start();
  const b = createActor(machine, { id: 'mcp:b' }).start();
  const off = [hub.register('turn:a', a), hub.register('mcp:b', b)];
  return { hub, a, b, off };
}

describe('inspection hub', () => {
  it('watches no actor system while no viewer is attached', () => {
    const { hub, a } = given();
    a.send({ type: 'NEXT' });
    expect(hub.watching()).toBe(0); // watching starts at once when it starts: no later tick to wait for
    const handle = hub.attach(viewer());
    expect(hub.watching()).toBe(2);
    handle.detach();
    expect(hub.watching()).toBe(0);
  });

  it('gives a late viewer one actor and one snapshot frame per live actor, then the live stream', async () => {
    const { hub, a } = given();
    a.send({ type: 'NEXT' });
    const v = viewer();
    hub.attach(v);
    expect(v.frames.map((f) => [f.type, f.name ?? f.snapshot?.value])).toEqual([
      ['@xstate.actor', 'turn:a'],
      ['@xstate.snapshot', 'yellow'],
      ['@xstate.actor', 'mcp:b'],
      ['@xstate.snapshot', 'green'],
    ]);
    a.send({ type: 'NEXT' });
    await vi.waitFor(() => expect(v.frames.at(-1)?.snapshot?.value).toBe('red'), PATIENT);
    expect(v.frames.slice(4).map((f) => f.type)).toEqual(['@xstate.event', '@xstate.snapshot']);
  });

  it('narrows a viewer to one actor', async () => {
    const { hub, a, b } = given();
    const v = viewer();
    hub.attach(v, 'mcp:b');
    a.send({ type: 'NEXT' });
    b.send({ type: 'NEXT' });
    // b's event and snapshot arrive with a's (queued first, converted in the same pass), or a's are not sent.
    await vi.waitFor(
      () => expect(v.frames.slice(2).map((f) => f.type)).toEqual(['@xstate.event', '@xstate.snapshot']),
      PATIENT,
    );
    expect(new Set(v.frames.map((f) => f.sessionId))).toEqual(new Set([b.sessionId]));
    expect(v.frames.length).toBe(4);
  });

  it('stops sending to a viewer that is behind, then resyncs it when it drains', async () => {
    const { hub, a } = given();
    let accepting = true;
    const v = viewer(() => accepting);
    const handle = hub.attach(v);
    accepting = false;
    const afterJoin = v.frames.length;
    a.send({ type: 'NEXT' });
    a.send({ type: 'NEXT' });
    // The queued events are converted in one pass: once the first frame is out, the pass is over.
    await vi.waitFor(() => expect(v.frames.length).toBeGreaterThan(afterJoin), PATIENT);
    // The send that found the viewer behind was still queued; nothing after it was.
    expect(v.frames.length).toBe(afterJoin + 1);
    accepting = true;
    handle.drained();
    const resync = afterJoin + 1;
    expect(v.frames[resync]?.type).toBe('resync');
    expect(v.frames.slice(resync + 1).map((f) => f.type)).toEqual([
      '@xstate.actor',
      '@xstate.snapshot',
      '@xstate.actor',
      '@xstate.snapshot',
    ]);
    expect(v.frames[resync + 2]?.snapshot?.value).toBe('red');
  });

  it('resyncs a viewer whose buffer filled during its late join, and sends it nothing meanwhile, new actors included', () => {
    const { hub } = given();
    let accepting = false;
    const v = viewer(() => accepting);
    const handle = hub.attach(v);
    expect(v.frames.map((f) => f.type)).toEqual(['@xstate.actor']); // refused: the rest of the late join waits
    hub.register('turn:c', createActor(machine, { id: 'turn:c' }).start());
    expect(v.frames.length).toBe(1);
    accepting = true;
    handle.drained();
    const oneActor = ['@xstate.actor', '@xstate.snapshot'];
    expect(v.frames.slice(1).map((f) => f.type)).toEqual(['resync', ...oneActor, ...oneActor, ...oneActor]);
  });

  it('forgets an actor once unregistered', () => {
    const { hub, off } = given();
    off[0]!();
    expect(hub.actorIds()).toEqual(['mcp:b']);
  });
});
