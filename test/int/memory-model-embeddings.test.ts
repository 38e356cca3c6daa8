/**
 * Semantic memory search as a user meets it (issue 62, `memory.embeddings.model`): the real service, the simulated
 * model calling the memory tools and the simulator's `/v1/embeddings` (deterministic vectors, a fault knob). Items
 * are embedded when saved; a search ranks by full text and similarity, so a query sharing no word with an item still
 * finds it; while embeddings fail a search is full text (never a failed call, one warning per failure streak).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';

const env = useSimulatorAndFolder('agentd-memory-embeddings-');
const MODEL = 'sim-embed';

/** The service's log lines, as JSON objects. */
function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

async function say(app: RunningApp, message: string) {
  const res = await fetch(`${app.url}/api/message-sync`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ sessionId: 'semantic', message, include: ['tools'] }),
  });
  return (await res.json()) as { response: string; tools: { name: string; ok: boolean }[] };
}
const save = (app: RunningApp, text: string) => say(app, `[[tool:memory_save ${JSON.stringify({ text })}]]`);
const search = (app: RunningApp, query: string) => say(app, `[[tool:memory_search ${JSON.stringify({ query })}]]`);
const embedded = () => env.sim.embeddingRequests.flatMap((r) => r.input);

describe('memory search with embeddings', () => {
  it('embeds items as they are saved, finds by similarity, and falls back to full text while embeddings fail', async () => {
    const { log, lines } = capturedLog();
    const app = await env.apps.start(
      { memory: { embeddings: { model: MODEL } }, llm: { timeoutMs: 10_000 } },
      { modelUrl: env.sim.url, deps: { log } },
    );
    const warnings = () => lines.filter((l) => l.msg === 'memory: embeddings failed; full text only');

    await save(app, 'I play the violoncello');
    await save(app, 'My cat is called Miso');
    expect(env.sim.embeddingRequests.every((r) => r.model === MODEL)).toBe(true);
    expect(embedded()).toEqual(['I play the violoncello', 'My cat is called Miso']);

    // "cello" shares no word with the item (full text finds nothing): the vectors find it, and only it.
    const similar = await search(app, 'cello');
    expect(similar.response).toContain('I play the violoncello');
    expect(similar.response).not.toContain('Miso');
    expect(embedded().at(-1)).toBe('cello'); // the query; the items' vectors were stored, not asked again
    expect(embedded()).toHaveLength(3);

    env.sim.faults.embeddings = 503;
    const plain = await search(app, 'Miso');
    expect(plain.tools).toEqual([expect.objectContaining({ name: 'memory_search', ok: true })]);
    expect(plain.response).toContain('My cat is called Miso');
    expect((await search(app, 'cello')).response).toBe('Tool memory_search returned: Nothing remembered matches.');
    const during = await save(app, 'Alice grows tomatoes');
    expect(during.tools).toEqual([expect.objectContaining({ name: 'memory_save', ok: true })]);
    expect(warnings()).toHaveLength(1); // one per failure streak
    expect(JSON.stringify(warnings())).not.toContain('tomatoes'); // no memory text in the log

    delete env.sim.faults.embeddings;
    expect((await search(app, 'violoncello')).response).toContain('I play the violoncello');
    expect(lines.some((l) => l.msg === 'memory: embeddings answer again')).toBe(true);

    env.sim.faults.embeddings = 500;
    await search(app, 'Miso');
    expect(warnings()).toHaveLength(2); // a new streak warns again
    delete env.sim.faults.embeddings;
    await env.apps.stop(app);
  });
});
