/**
 * The embeddings client of semantic memory search (src/memory/embeddings.ts) against the simulator's `/v1/embeddings`
 * (OpenAI's shape): one request for many texts, vectors in order, a refusal rejects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder } from '../../src/memory/embeddings.ts';
import { cosine } from '../../src/memory/hybrid.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';

describe('the embeddings client', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ apiKey: 'k' });
  });
  afterAll(() => sim.close());

  const embedder = (apiKey = 'k') =>
    createEmbedder({ baseURL: `${sim.url}/`, apiKey, model: 'm', timeoutMs: 5000, fetch: globalThis.fetch });

  it('asks for every text in one request and answers their vectors in order', async () => {
    const [a, b, c] = await embedder().embed(['red bicycle', 'bicycles', 'tax return']);
    expect(sim.embeddingRequests.at(-1)).toEqual({ model: 'm', input: ['red bicycle', 'bicycles', 'tax return'] });
    expect(a).toHaveLength(256);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!));
    expect(cosine(a!, a!)).toBeCloseTo(1, 10);
  });

  it('rejects when the API refuses (a wrong key, a fault)', async () => {
    await expect(embedder('wrong').embed(['x'])).rejects.toThrow('the embeddings API answered 401');
    sim.faults.embeddings = 503;
    await expect(embedder().embed(['x'])).rejects.toThrow('the embeddings API answered 503');
    delete sim.faults.embeddings;
  });
});
