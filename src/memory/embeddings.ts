/**
 * The embeddings client of semantic memory search (issue 62, `memory.embeddings.model`): the llm provider's
 * embeddings API in OpenAI's shape (`POST <baseURL>/embeddings`, `{ model, input }` → `{ data: [{ index, embedding }] }`),
 * as the memory service's MemoryEmbedder (types.ts). The service stores the vectors beside the items (`itemEmbedded`)
 * and ranks by full text and similarity (hybrid.ts).
 *
 * Contracts: `embed` resolves one vector per text, in order, or rejects (an error answer, a timeout, an answer of
 * another shape or length) with a message that names no text; the service then ranks by full text alone.
 */
import { z } from 'zod';
import type { FetchLike } from '../egress/proxy.ts';
import type { MemoryEmbedder } from './types.ts';

export interface EmbedderOptions {
  /** The llm provider's endpoint, up to `/embeddings` (llm.baseURL or the preset's). */
  baseURL: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  fetch: FetchLike;
}

const AnswerSchema = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.number()) })),
});

export function createEmbedder({ baseURL, apiKey, model, timeoutMs, fetch }: EmbedderOptions): MemoryEmbedder {
  const url = `${baseURL.replace(/\/+$/, '')}/embeddings`;
  return {
    model,
    async embed(texts) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ model, input: texts, encoding_format: 'float' }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`the embeddings API answered ${res.status}`);
      }
      const { data } = AnswerSchema.parse(await res.json());
      if (data.length !== texts.length)
        throw new Error(`the embeddings API answered ${data.length} vectors for ${texts.length} texts`);
      return [...data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    },
  };
}
