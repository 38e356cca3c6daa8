/**
 * The pieces of semantic memory search (src/memory/embeddings.ts): the embeddings client against the simulator's
 * `/v1/embeddings` (OpenAI's shape; a refusal rejects), cosine similarity, and the hybrid ranking's rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosine, createEmbedder, hybridRank, MIN_SIMILARITY } from '../../src/memory/embeddings.ts';
import type { MemoryItem } from '../../src/memory/types.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';

const item = (id: string, text: string): MemoryItem => ({
  id,
  text,
  tags: [],
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('the embeddings client', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ apiKey: 'k' });
  });
  afterAll(() => sim.close());

  const embedder = (apiKey = 'k') =>
    createEmbedder({ baseURL: `${sim.url}/`, apiKey, model: 'm', timeoutMs: 5000, fetch: globalThis.fetch });

  it('asks for every text in one request and answers their vectors in order', async () => {
    const [a, b, c] = await embedder()(['red bicycle', 'bicycles', 'tax return']);
    expect(sim.embeddingRequests.at(-1)).toEqual({ model: 'm', input: ['red bicycle', 'bicycles', 'tax return'] });
    expect(a).toHaveLength(256);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!));
    expect(cosine(a!, a!)).toBeCloseTo(1, 10);
  });

  it('rejects when the API refuses (a wrong key, a fault)', async () => {
    await expect(embedder('wrong')(['x'])).rejects.toThrow('the embeddings API answered 401');
    sim.faults.embeddings = 503;
    await expect(embedder()(['x'])).rejects.toThrow('the embeddings API answered 503');
    delete sim.faults.embeddings;
  });
});

describe('hybrid ranking', () => {
  const a = { item: item('a', 'alpha'), shared: false };
  const b = { item: item('b', 'beta'), shared: true };
  const c = { item: item('c', 'gamma'), shared: false };

  it('blends the full-text score (relative to the best) and the similarity, best first', () => {
    const fullText = [
      { ...a, score: 8 },
      { ...b, score: 4 },
    ];
    const similarity = [0.1, 0.9, undefined];
    const hits = hybridRank([a, b, c], fullText, (i) => similarity[i], 5);
    expect(hits.map((h) => [h.item.id, h.shared, +h.score.toFixed(3)])).toEqual([
      ['b', true, 0.7],
      ['a', false, 0.55],
    ]);
  });

  it('takes an item no word matches only from MIN_SIMILARITY on, and keeps to the limit', () => {
    const similarity = [MIN_SIMILARITY, MIN_SIMILARITY - 0.01, 0.8];
    expect(hybridRank([a, b, c], [], (i) => similarity[i], 5).map((h) => h.item.id)).toEqual(['c', 'a']);
    expect(hybridRank([a, b, c], [], (i) => similarity[i], 1).map((h) => h.item.id)).toEqual(['c']);
  });
});
