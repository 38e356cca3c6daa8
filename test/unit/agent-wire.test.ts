import { describe, expect, it } from 'vitest';
import { storedToWire } from '../../src/agent/wire.ts';
import type { DomainEvent, StoredEvent } from '../../src/store/types.ts';

const at = (seq: number, event: DomainEvent): StoredEvent => ({ seq, ts: '2026-01-01T00:00:00.000Z', sessionId: 's', event });

describe('storedToWire', () => {
  it('maps every stored event to the frame it was live, or to nothing', () => {
    const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
    const call = { id: 'c1', name: 'echo', arguments: '{}' };
    expect([
      storedToWire(at(1, { type: 'userMessage', turnId: 't', content: 'hi', image: { mimeType: 'image/png', base64: 'AA==' } })),
      storedToWire(at(2, { type: 'assistantMessage', turnId: 't', content: '', toolCalls: [call], final: false, model: 'm' })),
      storedToWire(at(3, { type: 'toolCall', turnId: 't', callId: 'c1', toolName: 'echo', serverId: 'x', args: { a: 1 } })),
      storedToWire(at(4, { type: 'toolResult', turnId: 't', callId: 'c1', toolName: 'echo', serverId: 'x', success: true, result: 'ok', durationMs: 5 })),
      storedToWire(at(5, { type: 'assistantMessage', turnId: 't', content: 'done', final: true, model: 'm', usage })),
      storedToWire(at(6, { type: 'turnFailed', turnId: 'u', code: 'AGENT_ERROR', message: 'turn cancelled', cancelled: true })),
      storedToWire(at(7, { type: 'turnFailed', turnId: 'v', code: 'AGENT_ERROR', message: 'boom' })),
      storedToWire(at(8, { type: 'reset' })),
    ]).toEqual([
      { name: 'agent.userMessage', payload: { sessionId: 's', turnId: 't', seq: 1, content: 'hi', hasImage: true } },
      undefined,
      { name: 'agent.toolCall', payload: { toolName: 'echo', serverId: 'x', callId: 'c1', args: { a: 1 }, sessionId: 's', turnId: 't', seq: 3 } },
      { name: 'agent.toolResult', payload: { toolName: 'echo', serverId: 'x', callId: 'c1', success: true, result: 'ok', durationMs: 5, sessionId: 's', turnId: 't', seq: 4 } },
      { name: 'agent.response', payload: { content: 'done', sessionId: 's', turnId: 't', seq: 5, model: 'm', usage } },
      { name: 'agent.error', payload: { code: 'AGENT_ERROR', message: 'turn cancelled', details: { reason: 'cancelled' }, sessionId: 's', turnId: 'u', seq: 6 } },
      { name: 'agent.error', payload: { code: 'AGENT_ERROR', message: 'boom', details: {}, sessionId: 's', turnId: 'v', seq: 7 } },
      { name: 'agent.reset', payload: { sessionId: 's', seq: 8 } },
    ]);
  });
});
