import { it } from 'vitest';
import { harness, askTools, reply } from './machine-harness.ts';
it('probe', async () => {
  const steps = [askTools('', ['a', 'echo', '{}'], ['b', 'echo', '{}']), reply('done')];
  const h = harness({ model: (i) => Promise.resolve(steps[i.iteration - 1] ?? reply('?')), tool: (i) => { if (i.callId === 'a') throw new Error('sync'); return Promise.resolve({ success: true, text: 'r', result: {}, serverId: 'srv', toolName: 'echo', durationMs: 1 }); } });
  h.send('go'); h.send('next');
  for (let i = 0; i < 30; i++) await new Promise((r) => setImmediate(r));
  console.log(h.trace(), h.actor.getSnapshot().value, h.facts('turnFailed'));
});
