/**
 * A turn's open mark (the store's `markOpenTurn`, what a restart resumes: issue 60) is written before the turn shows
 * itself running: its sender's acknowledgement, its `thinking` frame and the model's request wait for it, so a process
 * killed from then on leaves a turn that is resumed. It is removed once the turn's end is stored, and written as the
 * log says when a session opens.
 */
import { describe, expect, it } from 'vitest';
import { createAgentService, TAKE_OVER_COMMAND } from '../../src/agent/index.ts';
import type { AppCommands, AppEvents } from '../../src/app.ts';
import { createBus } from '../../src/bus/index.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import { EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';
import type { LlmClient } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { sessionKey } from '../../src/session-id.ts';
import { createMemoryStore } from '../../src/store/index.ts';
import { recordBus } from '../support/bus-recorder.ts';

/** An agent whose store holds each mark until the test lets it land (`land`), recording them in order. */
function rig() {
  const log = createLogger('silent');
  const bus = createBus<AppCommands, AppEvents>({ log });
  const store = createMemoryStore<SessionEvent>();
  const marks: boolean[] = [];
  const landings: (() => void)[] = [];
  store.markOpenTurn = (_sessionId, open) => {
    marks.push(open);
    return new Promise<void>((resolve) => landings.push(resolve));
  };
  const asked: string[] = [];
  const llm: LlmClient = {
    model: 'fake-model',
    complete(req) {
      asked.push(String(req.tail?.at(-1)?.content ?? req.messages.at(-1)?.content));
      return Promise.resolve({ text: 'ok', toolCalls: [], finishReason: 'stop' });
    },
  };
  bus.handle('mcp.modelTools', () => []);
  const config = agentConfigSchema.parse({ llm: { model: 'fake-model' }, storage: { type: 'memory' } });
  const agent = createAgentService({ config, bus, store, llm, log, resumeTurns: 3 });
  const land = () => {
    for (const resolve of landings.splice(0)) resolve();
  };
  return { bus, store, agent, recorder: recordBus(bus), marks, asked, land };
}

/** Lets every pending callback and I/O turn run. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("a turn's open mark", () => {
  it('is written before the turn is acknowledged, shown thinking or sent to the model; removed once it ends', async () => {
    const { bus, store, agent, recorder, marks, asked, land } = rig();
    await agent.start();
    let acknowledged = false;
    const sent = bus
      .execute('agent.sendMessage', { sessionId: sessionKey(undefined, 's1'), content: 'hi' }, { correlationId: 'a' })
      .then(() => (acknowledged = true));
    await expect.poll(async () => (await store.read('s1')).map((s) => s.event.type)).toEqual(['userMessage']);
    await settle();
    expect(marks).toEqual([false, true]); // (at open: no turn is open in its log)
    expect([acknowledged, asked, recorder.named('agent.thinking')]).toEqual([false, [], []]);

    land();
    await sent;
    expect((await recorder.turnEnd('a')).name).toBe('agent.response');
    expect(asked).toEqual(['hi']);
    expect(recorder.named('agent.thinking')).toHaveLength(1);
    expect(marks).toEqual([false, true, false]);
    land();
    await agent.stop();
  });

  it('is written as the log says when a session opens: a turn left running is marked before its model is asked', async () => {
    const { bus, store, agent, recorder, marks, asked, land } = rig();
    await store.append('s1', [{ v: EVENT_VERSION, type: 'userMessage', turnId: 't1', content: 'left running' }]);
    await store.append('s2', [{ v: EVENT_VERSION, type: 'userMessage', turnId: 't2', content: 'done' }]);
    await store.append('s2', [
      { v: EVENT_VERSION, type: 'response', turnId: 't2', content: 'ok', text: 'ok', model: 'm' },
    ]);
    await agent.start();
    agent.resumeLeftRunning(); // as the app does once its tool servers were attempted
    await bus.execute(TAKE_OVER_COMMAND, { sessionId: sessionKey(undefined, 's2') });
    expect(marks).toEqual([false]); // a mark a crash left behind goes
    land();

    await bus.execute(TAKE_OVER_COMMAND, { sessionId: sessionKey(undefined, 's1') });
    await expect.poll(() => recorder.named('agent.stepRestarted').length).toBe(1);
    await settle();
    expect([marks, asked]).toEqual([[false, true], []]);
    land();
    await expect.poll(() => recorder.named('agent.response').map((r) => r.turnId)).toEqual(['t1']);
    expect(asked).toEqual(['left running']);
    expect(marks).toEqual([false, true, false]);
    land();
    await agent.stop();
  });

  it('waits, in a session opened during start-up, until the tool servers were attempted before it resumes the turn', async () => {
    const { bus, store, agent, recorder, asked, land } = rig();
    await store.append('s1', [{ v: EVENT_VERSION, type: 'userMessage', turnId: 't1', content: 'left running' }]);
    await agent.start();
    // A request that opens the session while agentd still connects its tool servers (it listens before that).
    let opened = false;
    const opening = bus
      .execute(TAKE_OVER_COMMAND, { sessionId: sessionKey(undefined, 's1') })
      .then(() => (opened = true));
    await settle();
    expect([opened, recorder.named('agent.stepRestarted'), asked]).toEqual([false, [], []]);

    agent.resumeLeftRunning();
    await opening;
    await expect.poll(() => recorder.named('agent.stepRestarted').length).toBe(1);
    land();
    await expect.poll(() => recorder.named('agent.response').map((r) => r.turnId)).toEqual(['t1']);
    expect(asked).toEqual(['left running']);
    land();
    await agent.stop();
  });
});
