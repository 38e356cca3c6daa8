import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/session-id.ts';
import { LOCAL_SESSIONS } from '../../src/auth/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createLegacyApprovals } from '../../src/mcp-face/legacy-approvals.ts';

const initialize = (capabilities: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'c', version: '1' } },
});

const APPROVER = { mayApprove: true, admin: false };

describe('approvals of 2025-era HTTP clients: who is asked', () => {
  const approved: unknown[] = [];
  const bus = { execute: (_name: string, payload: unknown) => (approved.push(payload), Promise.resolve({})) } as never;
  const key = randomBytes(32);
  const legacy = createLegacyApprovals({ bus, log: createLogger('silent'), key: () => Promise.resolve(key) });

  it('given an initialize, a session id is given only to a client that declared form elicitation', async () => {
    for (const [elicitation, elicits] of [
      [{}, true],
      [{ form: {} }, true],
      [{ form: {}, url: {} }, true],
      [{ url: {} }, false],
      [undefined, false],
    ] as const) {
      const sessionId = await legacy.sessionIdFor(initialize(elicitation === undefined ? {} : { elicitation }));
      expect(sessionId !== undefined, JSON.stringify(elicitation)).toBe(elicits);
      if (sessionId) expect(await legacy.elicits(sessionId)).toBe(true);
    }
    expect(await legacy.sessionIdFor({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBeUndefined();
    expect(await legacy.elicits(null)).toBe(false);
    expect(await legacy.elicits('made-up')).toBe(false);
  });

  it('given an initialize that declares the MCP Apps extension, its session id recalls that (and elicitation apart)', async () => {
    const ui = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } };
    const appsOnly = await legacy.sessionIdFor(initialize({ extensions: ui }));
    expect(await legacy.declared(appsOnly ?? null)).toEqual({ elicits: false, apps: true });
    const both = await legacy.sessionIdFor(initialize({ extensions: ui, elicitation: {} }));
    expect(await legacy.declared(both ?? null)).toEqual({ elicits: true, apps: true });
    const other = await legacy.sessionIdFor(initialize({ extensions: { 'io.example/other': {} } }));
    expect(other).toBeUndefined();
    expect(await legacy.declared('made-up')).toEqual({ elicits: false, apps: false });
  });

  it('given a body without answers of ours, answer leaves it to the server; an answer of ours is applied once opened', async () => {
    expect(await legacy.answer({ jsonrpc: '2.0', id: 3, result: {} }, LOCAL_SESSIONS, APPROVER)).toBeUndefined();
    expect(
      await legacy.answer({ jsonrpc: '2.0', id: 'agentd-approval.x', method: 'ping' }, LOCAL_SESSIONS, APPROVER),
    ).toBeUndefined();
    const sent: { id?: unknown; method: string; params?: unknown }[] = [];
    const asked = await legacy.ask(
      (message) => (sent.push(message), Promise.resolve()),
      { message: 'Allow?', requestedSchema: { type: 'object', properties: {}, required: [] } } as never,
      { sessionId: sessionKey(undefined, 's1'), callId: 'c1' },
    );
    const id = String(sent[0]?.id);
    expect(sent[0]).toMatchObject({ method: 'elicitation/create', params: { message: 'Allow?' } });
    await asked.withdraw('answered elsewhere');
    expect(sent[1]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'answered elsewhere' },
    });
    const answer = { jsonrpc: '2.0', id, result: { action: 'accept', content: { decision: 'approve' } } };
    expect(await legacy.answer(answer, LOCAL_SESSIONS, { mayApprove: false, admin: false })).toBe('refused'); // may not approve
    expect(approved).toEqual([]);
    expect(await legacy.answer(answer, LOCAL_SESSIONS, APPROVER)).toBe('applied');
    expect(approved).toEqual([
      { sessionId: 's1', id: 'c1', answer: { decision: 'approve' }, by: 'mcp-elicitation', admin: false },
    ]);
  });

  it('given a key that cannot be read, no client is asked and no request fails', async () => {
    const down = createLegacyApprovals({
      bus,
      log: createLogger('silent'),
      key: () => Promise.reject(new Error('redis down')),
    });
    expect(await down.sessionIdFor(initialize({ elicitation: {} }))).toBeUndefined();
    expect(await down.elicits((await legacy.sessionIdFor(initialize({ elicitation: {} }))) ?? '')).toBe(false);
  });
});
