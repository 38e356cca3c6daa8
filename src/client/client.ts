/**
 * AgentdClient: every REST route as `client.api.<name>(args)` (routes.ts: its route and types), `request` for any
 * path, and the streams: `chat` (one turn), `follow` (a session's frames, resumed across dropped connections),
 * `questions` (what waits for a person, each with `answer`), `serveClientTools` (calls of tools the client runs).
 */
import { createApi, type Api } from './api.ts';
import { chat, type ChatOptions, type LocalTool } from './chat.ts';
import { serveClientTools, type ClientToolHandler, type ToolContext } from './client-tools.ts';
import { inputError } from './errors.ts';
import { followFrames, type FollowOptions } from './follow.ts';
import type { Frame } from './frames.ts';
import { createTransport, type CallOptions, type Transport } from './http.ts';
import { checkKeys, checkOptions, type ClientOptions } from './options.ts';
import { questions, type QuestionsOptions, type WaitingQuestion } from './questions.ts';
import type { HttpMethod } from './routes.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface RawRequest {
  body?: unknown;
  /** An answer that is not JSON (a page, YAML, NDJSON): as text. */
  text?: boolean;
}

export interface SendOptions extends CallOptions {
  /** Tools the client runs, as `chat` takes them. */
  tools?: Record<string, LocalTool>;
}

export class AgentdClient {
  /** A method per REST route, by name (docs/client.md lists them). */
  readonly api: Api;
  readonly #transport: Transport;
  readonly #ctx: ToolContext;

  constructor(options: ClientOptions) {
    const checked = checkOptions(options);
    this.#transport = createTransport(checked);
    this.api = createApi(this.#transport);
    this.#ctx = { transport: this.#transport, options: checked, api: this.api, chatTurns: new Set() };
  }

  /** Sends `message` to session `sessionId` and yields the turn's frames; ends after its `response`. */
  chat(sessionId: string, message: string, options?: ChatOptions): AsyncGenerator<Frame> {
    return chat(this.#ctx, sessionId, message, options);
  }

  /**
   * Sends `message` and answers the reply's text (`POST /api/message-sync`). With `tools`, the turn is a `chat` read
   * to its end instead (the calls of its tools are answered from the frames it follows), so `headers` cannot go along.
   */
  async send(sessionId: string, message: string, options: SendOptions = {}): Promise<string> {
    if (typeof message !== 'string') throw inputError(`send: message must be a string, not ${typeof message}`);
    checkKeys('send option', options, ['signal', 'headers', 'tools']);
    const { tools, ...call } = options;
    if (tools === undefined) return (await this.api.messageSync({ body: { message, sessionId } }, call)).response;
    if (call.headers !== undefined)
      throw inputError('send: headers cannot go with tools (the turn is followed over the WebSocket)', {
        option: 'headers',
      });
    let reply = '';
    for await (const frame of this.chat(sessionId, message, { tools, ...(call.signal && { signal: call.signal }) }))
      if (frame.event === 'response') reply = frame.data.content;
    return reply;
  }

  /** The session's frames (after `since` first, when given), across dropped connections, until aborted. */
  follow(sessionId: string, options: FollowOptions = {}): AsyncGenerator<Frame> {
    if (typeof sessionId !== 'string' || sessionId === '')
      throw inputError('follow: sessionId must be a non-empty string');
    checkKeys('follow option', options, ['since', 'signal', 'owner']);
    if (options.since !== undefined && !(Number.isInteger(options.since) && options.since >= 0))
      throw inputError('follow: since must be a non-negative integer', { field: 'since' });
    return followFrames(this.#ctx, sessionId, options) as AsyncGenerator<Frame>;
  }

  /** The questions the session waits on, now and as they come, each with `answer`. */
  questions(sessionId: string, options: QuestionsOptions = {}): AsyncGenerator<WaitingQuestion> {
    checkKeys('questions option', options, ['signal', 'owner']);
    return questions(this.#ctx, sessionId, options);
  }

  /**
   * Answers the session's calls of tools the client runs with `handlers` (by tool name; one it has none for is
   * answered as failed) until aborted, except those of turns a `chat` of this client answers itself.
   */
  serveClientTools(
    sessionId: string,
    handlers: Record<string, ClientToolHandler>,
    options: QuestionsOptions = {},
  ): Promise<void> {
    checkKeys('serveClientTools option', options, ['signal', 'owner']);
    return serveClientTools(this.#ctx, sessionId, handlers, options);
  }

  /** Any route, by method and path (with its query string): what the client has no method for. */
  request<T = unknown>(method: HttpMethod, path: string, request: RawRequest = {}, options?: CallOptions): Promise<T> {
    if (!METHODS.includes(method)) throw inputError(`request: unknown method ${String(method)}`);
    if (typeof path !== 'string' || !path.startsWith('/')) throw inputError('request: path must start with /');
    checkKeys('request option', request, ['body', 'text']);
    return this.#transport.call<T>(
      {
        method,
        path,
        ...(request.body !== undefined && { body: { json: request.body } }),
        ...(request.text && { text: true }),
      },
      options,
    );
  }
}
