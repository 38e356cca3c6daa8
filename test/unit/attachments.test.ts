/** What the model is given of a user turn with attached resources and a prompt, and how progress is relayed. */
import { describe, expect, it, vi } from 'vitest';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { userTurn, type Attached } from '../../src/conversation/attachments.ts';
import { checkSessionEvent } from '../../src/conversation/session-events.ts';
import { projectHistory } from '../../src/agent/session/history.ts';
import { queuedOf } from '../../src/agent/session/state.ts';
import { toOpenAiMessage } from '../../src/llm/messages.ts';
import { createProgressRelay } from '../../src/tools/mcp/progress-relay.ts';

const png = { mimeType: 'image/png', base64: 'iVBORw0KGgo=' };
const attached: Attached = {
  resources: [
    { serverId: 's', uri: 'demo://a', mimeType: 'text/plain', text: 'A text' },
    { serverId: 's', uri: 'demo://img', mimeType: 'image/png', image: png },
  ],
  prompt: {
    serverId: 's',
    name: 'p',
    arguments: { city: 'Paris' },
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Which unit?' },
    ],
  },
};

describe('user turn with attachments', () => {
  it('is the prompt messages, then the text with its text resources and every image', () => {
    expect(userTurn({ content: 'Celsius', attached })).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Which unit?' },
      { role: 'user', content: 'Celsius\n\n[resource demo://a (text/plain)]\nA text', image: png },
    ]);
    expect(userTurn({ content: 'x', image: png, attached: { resources: attached.resources! } }).at(-1)).toEqual({
      role: 'user',
      content: 'x\n\n[resource demo://a (text/plain)]\nA text',
      image: png,
      images: [png],
    });
  });

  it('is only the prompt messages when the text is empty and nothing else is attached', () => {
    expect(userTurn({ content: '', attached: { prompt: attached.prompt! } })).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Which unit?' },
    ]);
    expect(userTurn({ content: '' })).toEqual([{ role: 'user', content: '' }]);
  });

  it('is stored as an optional field of version 2 and replayed into the same history', () => {
    const stored = checkSessionEvent({ v: 2, type: 'userMessage', turnId: 't', content: 'Celsius', attached });
    expect(stored.ok).toBe(true);
    if (!stored.ok) return;
    expect(projectHistory([stored.event])).toEqual(userTurn({ content: 'Celsius', attached }));
  });

  it('a message queued behind a running turn keeps its attachments for its turn', () => {
    const queued = checkSessionEvent({
      v: 2,
      type: 'messageQueued',
      turnId: 't2',
      correlationId: 'c2',
      content: 'later',
      attached,
    });
    expect(queued.ok && queuedOf([queued.event])).toEqual([
      { turnId: 't2', correlationId: 'c2', content: 'later', attached },
    ]);
  });

  it('sends every image as an image_url part', () => {
    const message = toOpenAiMessage({ role: 'user', content: 'two', image: png, images: [png] });
    expect(message.content).toEqual([
      { type: 'text', text: 'two' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
  });
});

describe('progress relay', () => {
  const fakeTransport = () => {
    const passed: unknown[] = [];
    const transport = { onmessage: (m: unknown) => void passed.push(m) } as unknown as Transport;
    return { transport, passed, deliver: (m: unknown) => transport.onmessage?.(m as never) };
  };
  const progress = (token: string, n: number) => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: token, progress: n, total: 2 },
  });

  it("takes its tokens' notifications off the transport, in order and at once; others pass on", () => {
    const relay = createProgressRelay();
    const { transport, passed, deliver } = fakeTransport();
    relay.attach(transport);
    const seen: number[] = [];
    const call = relay.begin({ timeout: 1_000, resetOnProgress: false, onProgress: (p) => seen.push(p.progress) });
    deliver(progress(call.token, 1));
    deliver(progress(call.token, 2));
    expect(seen).toEqual([1, 2]);
    deliver(progress('someone-else', 1));
    deliver({ jsonrpc: '2.0', id: 1, result: {} });
    expect(passed).toHaveLength(2);
    call.end();
    deliver(progress(call.token, 3)); // late: dropped, not passed to the SDK (which would call it unknown)
    expect(seen).toEqual([1, 2]);
    expect(passed).toHaveLength(2);
  });

  it('aborts a call without progress for `timeout`; progress restarts the wait', () => {
    vi.useFakeTimers();
    try {
      const relay = createProgressRelay();
      const { transport, deliver } = fakeTransport();
      relay.attach(transport);
      const call = relay.begin({ timeout: 100, resetOnProgress: true });
      vi.advanceTimersByTime(90);
      deliver(progress(call.token, 1));
      vi.advanceTimersByTime(90);
      expect(call.signal.aborted).toBe(false);
      vi.advanceTimersByTime(20);
      expect(call.signal.aborted).toBe(true);
      expect(call.timedOut()).toBe(true);
      call.end();
    } finally {
      vi.useRealTimers();
    }
  });

  it("passes the caller's abort on", () => {
    const relay = createProgressRelay();
    const outer = new AbortController();
    const call = relay.begin({ timeout: 100, resetOnProgress: false, signal: outer.signal });
    outer.abort();
    expect(call.signal.aborted).toBe(true);
    expect(call.timedOut()).toBe(false);
    call.end();
  });
});
