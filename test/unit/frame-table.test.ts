/**
 * The frame table: every frame the agent sends, as `toFrame` and the transient frame builders make
 * it, and a connection's first frame (`hello`), pinned by test/golden/frames.json; the event and
 * client-frame tables of docs/api.md are checked against the code.
 */
import { describe, expect, it } from 'vitest';
import { toFrame, type FrameName, type TransientFrame } from '../../src/agent/frames.ts';
import { chunkFrame, droppedFrame, thinkingFrame } from '../../src/agent/transient-frames.ts';
import { createReplyTracker } from '../../src/agent/follow/reply-so-far.ts';
import { CLIENT_FRAMES, MCP_EVENT_FRAMES, eventFrameOf, helloFrame } from '../../src/http/frames.ts';
import { API_DOC, expectGolden, sectionTables } from '../support/golden.ts';
import { sampleEvents } from './store-contract.ts';

/** The `replySoFar` frame a subscriber gets after `chunks` (the reply tracker's fold, as the gateway sends it). */
function replySoFarOf(chunks: TransientFrame[]) {
  let listener: (e: { name: string; payload: unknown }) => void = () => undefined;
  const replies = createReplyTracker({ onAny: (l) => ((listener = l as typeof listener), () => undefined) });
  for (const { event, data } of chunks) listener({ name: `agent.${event}`, payload: data });
  return { event: 'replySoFar', data: replies.of('s')! };
}

const stored = sampleEvents.map((event, i) => ({ seq: i + 1, ts: '2026-01-01T00:00:00.000Z', sessionId: 's', event }));
const frames = [
  ...stored.map((s) => ({ stored: s.event.type, frame: toFrame(s) ?? null })),
  { transient: 'thinking', frame: thinkingFrame('s', 't1', 3) },
  { transient: 'chunk', frame: chunkFrame('s', 't1', 3, 'Hel') },
  { transient: 'replySoFar', frame: replySoFarOf([chunkFrame('s', 't1', 3, 'Hel'), chunkFrame('s', 't1', 3, 'lo')]) },
  { transient: 'dropped', frame: droppedFrame('s', 't2', 3, 'reset') },
  { connection: 'first frame', frame: helloFrame({ storeId: '6f1c2b3e-9a4d-4c1e-8f2a-3b5d7e9f1a2c' }) },
];

/** Every agent frame (each the bus event `agent.<name>`); the compiler names one left out. */
const AGENT_FRAMES: Record<FrameName, true> = {
  userMessage: true,
  thinking: true,
  chunk: true,
  replySoFar: true,
  reasoning: true,
  toolCall: true,
  toolResult: true,
  response: true,
  toolApprovalRequested: true,
  toolApprovalResolved: true,
  elicitationRequested: true,
  elicitationResolved: true,
  clientToolRequested: true,
  clientToolResolved: true,
  error: true,
  conversationReset: true,
  contextCompacted: true,
  stepRestarted: true,
};

/** `a, b?, c` → ['a', 'b', 'c'] (optional marks dropped). */
const fieldList = (cell: string) =>
  cell
    .split(',')
    .map((f) => f.trim().replace(/\?$/, ''))
    .filter((f) => f !== '' && f !== '{}');

describe('frame table', () => {
  it('every stored event and transient frame has the pinned frame', () => {
    expectGolden('frames', frames);
  });

  it('docs/api.md lists exactly the frames the service sends, with their data fields', () => {
    const rows = sectionTables(API_DOC, '## Events').flatMap((t) => t.rows);
    const documented = new Map(rows.map(([event = '', data = '']) => [event, fieldList(data)]));
    const sent = [...Object.keys(AGENT_FRAMES), ...Object.values(MCP_EVENT_FRAMES), 'pong', 'hello', 'storeChanged'];
    expect([...documented.keys()].sort()).toEqual(sent.sort());
    for (const { frame } of frames) {
      if (!frame) continue;
      expect(documented.get(frame.event), `docs/api.md fields of ${frame.event}`).toEqual(
        expect.arrayContaining(Object.keys(frame.data)),
      );
    }
  });

  it('names the frame of a bus event: a transient agent.X is X, an MCP event its row', () => {
    expect(eventFrameOf('agent.error')).toBe('error');
    expect(eventFrameOf('agent.chunk')).toBe('chunk');
    expect(eventFrameOf('mcp.serverStatus')).toBe('mcpServerStatus');
  });

  it('docs/api.md lists exactly the client frames, with their fields', () => {
    const rows = sectionTables(API_DOC, '## WebSocket').find((t) => t.header[0] === 'type')?.rows ?? [];
    const documented = Object.fromEntries(rows.map(([type = '', fields = '']) => [type, fieldList(fields).sort()]));
    const actual = Object.fromEntries(
      Object.entries(CLIENT_FRAMES).map(([type, schema]) => [
        type,
        Object.keys(schema.shape)
          .filter((k) => k !== 'type')
          .sort(),
      ]),
    );
    expect(documented).toEqual(actual);
  });
});
