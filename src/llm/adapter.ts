/**
 * The seam between the model port's request loop (client.ts) and one model API: how a request is
 * written, where it goes, and how the API's answer (a stream of events, or one document) becomes a
 * ModelStep. One adapter per API: chat-adapter.ts, responses-adapter.ts, messages-adapter.ts.
 *
 * Contracts:
 * - `encode` is called once per request (retries send the same bytes); it may keep work per
 *   messages array (request-body.ts).
 * - A folder takes the stream's events in order and calls `onText` with every text delta, then
 *   `build` gives the step; `size` counts reply characters so far (text and tool arguments).
 *   Once the body ended, `unfinished` says why the stream is no whole answer (its API's final event
 *   never came, or a tool call was never closed), else undefined: the client then fails the step
 *   (ModelAnswerError `incomplete_stream`), so no call of a cut stream ever runs.
 *   An API error carried inside the stream is thrown from `add` as a ModelApiError without a status.
 * - `whole` turns a non-streamed answer into the same step a stream of it would give.
 * - Reasoning comes back as `step.reasoning` tagged with the adapter's api (the client adds the
 *   model and endpoint); an adapter sends reasoning back only to where it came from (replayFor).
 */
import type { LlmConfig } from '../config/schema.ts';
import type { ModelApi, ModelRequest, ModelStep, StepReasoning, Usage } from './types.ts';

/** What one request asks, as the adapter writes it: `model` is the one it goes to. */
export type RequestSpec = Pick<ModelRequest, 'messages' | 'tail' | 'tools' | 'maxTokens'> & { model: string };

export interface StepFolder {
  add(event: unknown): void;
  readonly size: number;
  /** Why the ended stream is no whole answer (undefined: it is one); `done`: `data: [DONE]` came. */
  unfinished(done: boolean): string | undefined;
  build(newId: () => string): ModelStep;
}

export interface Adapter {
  readonly api: ModelApi;
  /** Path under the base URL, e.g. `/chat/completions`. */
  readonly path: string;
  /** Headers of every request (null removes one the client would send, e.g. `authorization`). */
  readonly headers: Record<string, string | null>;
  readonly stream: boolean;
  encode(request: RequestSpec): Buffer;
  folder(onText: ((delta: string) => void) | undefined): StepFolder;
  whole(body: unknown, newId: () => string): ModelStep;
}

/** How every adapter is set up (from the llm config of its model). */
export interface AdapterOptions extends Pick<LlmConfig, 'stream' | 'temperature' | 'reasoning'> {
  /** Prompt-cache breakpoints (messages). */
  cache: boolean;
  /** `max_tokens` when the request names none and the API needs one (messages). */
  maxOutputTokens: number;
  /** The key, for APIs that take it in their own header (messages: `x-api-key`). */
  apiKey: string;
  /** Where the model is reached (endpointOf its base URL): reasoning from elsewhere is not sent back. */
  endpoint: string;
}

/**
 * The opaque reasoning items an assistant message sends back to `model` at `endpoint` over `api`:
 * its own items only when the same api, model name and endpoint wrote them, else none. Encrypted
 * reasoning (Responses `encrypted_content`) and thinking signatures (Messages) are checked by the
 * deployment that issued them: another model, or the same name behind another endpoint (another
 * provider, a gateway, an `llm.fallback` entry), refuses them with a 400, which fails the turn,
 * while a model without them just reasons afresh. The endpoint is the base URL's origin and path,
 * since that names the deployment; the key is never stored, so it is not compared.
 */
export function replayFor(
  reasoning: StepReasoning | undefined,
  api: ModelApi,
  model: string,
  endpoint: string,
): readonly Record<string, unknown>[] {
  if (reasoning?.api !== api || reasoning.model !== model || reasoning.endpoint !== endpoint) return [];
  return reasoning.replay ?? [];
}

/** Thrown when the caller's `onText` throws, so the client can hand back the caller's own error. */
export class TextCallbackError extends Error {
  constructor(readonly inner: unknown) {
    super('onText threw');
  }
}

/** Calls `onText`, wrapping what it throws in TextCallbackError. */
export function emitText(onText: ((delta: string) => void) | undefined, text: string): void {
  if (onText === undefined || text === '') return;
  try {
    onText(text);
  } catch (e) {
    throw new TextCallbackError(e);
  }
}

/** What every folder shares: `size` (characters counted so far) and reply text counted and handed to `onText`. */
export abstract class TextFolder {
  protected chars = 0;

  constructor(private readonly onText: ((delta: string) => void) | undefined) {}

  get size(): number {
    return this.chars;
  }

  protected emit(delta: string): void {
    this.chars += delta.length;
    emitText(this.onText, delta);
  }
}

/** A usage record from its parts (cache and reasoning figures only when the provider gave them). */
export function usageOf(
  promptTokens: number,
  completionTokens: number,
  cachedTokens?: number | null,
  cacheWriteTokens?: number | null,
  reasoningTokens?: number | null,
): Usage {
  const usage: Usage = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
  if (cachedTokens) usage.cachedTokens = cachedTokens;
  if (cacheWriteTokens) usage.cacheWriteTokens = cacheWriteTokens;
  if (reasoningTokens) usage.reasoningTokens = reasoningTokens;
  return usage;
}

/** `"key":value` pairs after a body's fixed part, for the optional keys set. */
export function optionalKeys(keys: Record<string, unknown>): string {
  let out = '';
  for (const [key, value] of Object.entries(keys))
    if (value !== undefined) out += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return out;
}
