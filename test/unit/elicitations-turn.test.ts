/**
 * The turn machine's waiting state for elicitations (through its session, as machine-harness.ts runs
 * it): a running call's question moves the turn to `awaitingElicitation` (tag `waitingForUser`) and
 * its answer back to `callingTools`; a call waiting for approval comes first.
 */
import type { ActorRefFrom } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { ModelTool } from '../../src/conversation/tool-shapes.ts';
import type { ElicitationChange, turnMachine } from '../../machines/turn.machine.ts';
import { askTools, gatedTools, harness, ok, reply, script, tools, waitUntil } from './machine-harness.ts';

const turnOf = (h: ReturnType<typeof harness>) => h.actor.getSnapshot().children.turn as ActorRefFrom<typeof turnMachine> | undefined;
const question = (id: string) => ({ id, kind: 'elicitation' as const, serverId: 'srv', callId: 'a', question: 'Name?', expiresAt: '2026-01-01T00:00:00.000Z' });
const opened = (id: string): ElicitationChange => ({ type: 'ELICITATION', pending: true, question: question(id) });
const closed = (id: string): ElicitationChange => ({ type: 'ELICITATION', pending: false, id });

describe('turn machine: elicitations', () => {
  it('waits for the user while a running call has a question open, then goes on', async () => {
    const t = gatedTools();
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}']), reply('done')), tool: t.tool });
    h.send('go');
    await waitUntil(() => t.gates.has('a'));
    expect(turnOf(h)?.getSnapshot().value).toBe('callingTools');
    turnOf(h)?.send(opened('e1'));
    expect(turnOf(h)?.getSnapshot().value).toBe('awaitingElicitation');
    expect(turnOf(h)?.getSnapshot().context.eliciting).toEqual([question('e1')]);
    expect(turnOf(h)?.getSnapshot().hasTag('waitingForUser')).toBe(true);
    turnOf(h)?.send(closed('e1'));
    expect(turnOf(h)?.getSnapshot().value).toBe('callingTools');
    // A question still open when its call settles does not hold the turn.
    turnOf(h)?.send(opened('e2'));
    t.gate('a').resolve(ok('r'));
    await h.idle();
    expect(h.facts('response')[0]?.content).toBe('done');
  });

  it('a call waiting for approval comes first', async () => {
    const t = gatedTools();
    const catalogue: ModelTool[] = tools.map((x) => ({ ...x, action: x.name === 'echo' ? 'ask' : 'allow' }));
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}'], ['b', 'add', '{}']), reply('done')), catalogue, tool: t.tool, approvalTimeoutMs: 5000 });
    h.send('go');
    await waitUntil(() => t.gates.has('b'));
    turnOf(h)?.send(opened('e1'));
    expect(turnOf(h)?.getSnapshot().value).toBe('awaitingApproval');
    h.actor.send({ type: 'APPROVAL', callId: 'a', decision: 'deny', by: 'rest' });
    await waitUntil(() => turnOf(h)?.getSnapshot().value === 'awaitingElicitation');
    turnOf(h)?.send(closed('e1'));
    t.gate('b').resolve(ok('3'));
    await h.idle();
    expect(h.facts('response')).toHaveLength(1);
  });
});
