import { describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/session-id.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { createAgentService, NOT_SESSION_SCOPED, SESSION_COMMANDS, TAKE_OVER_COMMAND } from '../../src/agent/index.ts';
import type { AppCommands, AppEvents } from '../../src/app.ts';
import { createBus } from '../../src/bus/index.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import { EVENT_VERSION } from '../../src/conversation/session-events.ts';
import type { LlmClient } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryStore } from '../../src/store/index.ts';

function rig() {
  const log = createLogger('silent');
  const bus = createBus<AppCommands, AppEvents>({ log });
  const handled: string[] = [];
  const handle = bus.handle.bind(bus);
  bus.handle = (name, handler) => {
    handled.push(name);
    return handle(name, handler);
  };
  const store = createMemoryStore<SessionEvent>();
  const config = agentConfigSchema.parse({
    systemPrompt: 'Be brief.',
    llm: { model: 'fake-model' },
    storage: { type: 'memory' },
  });
  const llm: LlmClient = { model: 'fake-model', complete: () => Promise.reject(new Error('no model here')) };
  bus.handle('mcp.modelTools', () => []);
  const agent = createAgentService({ config, bus, store, llm, log, orphanedTurnReason: 'owner_lost' });
  return { bus, store, agent, handled };
}

describe('session commands', () => {
  it('the agent service handles every command the lists name, and each is named once', async () => {
    const { agent, handled } = rig();
    await agent.start();
    for (const name of [...SESSION_COMMANDS, ...NOT_SESSION_SCOPED]) expect(handled).toContain(name);
    expect(new Set([...SESSION_COMMANDS, ...NOT_SESSION_SCOPED]).size).toBe(
      SESSION_COMMANDS.length + NOT_SESSION_SCOPED.length,
    );
    expect(SESSION_COMMANDS).toContain(TAKE_OVER_COMMAND);
    await agent.stop();
  });

  it('the take-over command opens the session, ending a turn its log left running', async () => {
    const { bus, store, agent } = rig();
    await store.append('s1', [{ v: EVENT_VERSION, type: 'userMessage', turnId: 't1', content: 'hi' }]);
    await agent.start();
    expect(agent.holds('s1')).toBe(false);
    expect(await bus.execute(TAKE_OVER_COMMAND, { sessionId: sessionKey(undefined, 's1') })).toEqual({ opened: true });
    expect(agent.holds('s1')).toBe(true);
    await expect
      .poll(async () => (await store.read('s1')).map((s) => s.event.type))
      .toEqual(['userMessage', 'turnFailed']);
    const failed = (await store.read('s1'))[1]?.event;
    expect(failed).toMatchObject({ type: 'turnFailed', turnId: 't1', details: { reason: 'owner_lost' } });
    await agent.stop();
  });
});
