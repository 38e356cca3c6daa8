/**
 * The simulator's `POST /v1/embeddings` (OpenAI's shape): deterministic vectors, a hashed bag of words and of their
 * letter trigrams (so texts sharing words or word parts are close, unrelated ones near 0), L2-normalized.
 * `input` is a string or an array of strings; `dimensions` (default EMBEDDING_DIMENSIONS) sets the length.
 */
export const EMBEDDING_DIMENSIONS = 256;

/** FNV-1a, 32 bits. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The simulator's vector of `text`. */
export function simulatedEmbedding(text: string, dimensions = EMBEDDING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    vector[hash(word) % dimensions]! += 1;
    const padded = `#${word}#`;
    for (let i = 0; i + 3 <= padded.length; i++) vector[hash(padded.slice(i, i + 3)) % dimensions]! += 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  return norm === 0 ? vector : vector.map((x) => x / norm);
}

/** One embeddings request as received. */
export interface EmbeddingRequest {
  model: string;
  input: string[];
}

/** The request of `body`, or why it is malformed. */
export function readEmbeddingRequest(body: unknown): (EmbeddingRequest & { dimensions?: number }) | string {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const input = typeof b['input'] === 'string' ? [b['input']] : b['input'];
  if (typeof b['model'] !== 'string' || !Array.isArray(input) || !input.every((t) => typeof t === 'string'))
    return 'Request needs "model" (string) and "input" (string or array of strings) (simulator).';
  const dimensions = b['dimensions'];
  if (dimensions !== undefined && (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1))
    return '"dimensions" must be a positive integer (simulator).';
  return { model: b['model'], input, ...(dimensions !== undefined && { dimensions }) };
}

/** OpenAI's answer to `request`. */
export function embeddingsAnswer(request: EmbeddingRequest & { dimensions?: number }): string {
  const tokens = request.input.reduce((n, t) => n + Math.ceil(t.length / 4), 0);
  return JSON.stringify({
    object: 'list',
    data: request.input.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: simulatedEmbedding(text, request.dimensions),
    })),
    model: request.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
