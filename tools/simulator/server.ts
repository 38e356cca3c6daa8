/**
 * The model simulator's HTTP face (node:http, no framework): OpenAI Chat Completions, OpenAI
 * Responses and Anthropic Messages endpoints whose answers are scripted per request (see
 * directives.ts and plan.ts), so many clients can share one simulator. A Responses or Messages
 * request is read into the chat shape (wire-*.ts), planned the same way, and answered in its own
 * API's words. Nothing is logged per request; every instance owns its own state.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DirectiveError } from './directives.ts';
import { planReply, windowOf } from './plan.ts';
import {
  contextOverflowJson,
  errorJson,
  promptTokens,
  renderCompletion,
  renderStream,
  type RenderContext,
} from './render.ts';
import { afterDelay, pumpStream, type ActiveSet, type Pacing } from './stream.ts';
import type { ChatRequestBody, RecordedRequest, Reply, SimApi, Simulator, SimulatorOptions } from './types.ts';
import { MessagesCache } from './messages-cache.ts';
import {
  badMessagesBody,
  messagesErrorJson,
  messagesOverflowJson,
  messagesStream,
  messagesToChat,
  messagesWhole,
  thinkingProblem,
  type MessagesBody,
} from './wire-messages.ts';
import { badResponsesBody, responsesToChat, type ResponsesBody } from './responses-request.ts';
import { responsesOverflowJson, responsesStream, responsesWhole } from './wire-responses.ts';
import { embeddingsAnswer, readEmbeddingRequest, type EmbeddingRequest } from './embeddings.ts';

const JSON_HEADERS = { 'Content-Type': 'application/json' };

function sendJson(res: ServerResponse, status: number, body: string, extra?: Record<string, string>): void {
  res.writeHead(status, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body), ...extra });
  res.end(body);
}

function sendError(
  res: ServerResponse,
  status: number,
  message?: string,
  retryAfterSec?: number,
  api: SimApi = 'chat',
): void {
  const body = api === 'messages' ? messagesErrorJson(status, message) : errorJson(status, message);
  sendJson(res, status, body, retryAfterSec === undefined ? undefined : { 'Retry-After': String(retryAfterSec) });
}

/** The request of `api` in the chat shape, or why it is malformed. */
function readRequest(api: SimApi, body: unknown): ChatRequestBody | string {
  if (api === 'responses') return badResponsesBody(body) ?? responsesToChat(body as ResponsesBody);
  if (api === 'messages') return badMessagesBody(body) ?? messagesToChat(body as MessagesBody);
  return isChatBody(body) ? body : 'Request needs "model" (string) and "messages" (array of {role}) (simulator).';
}

const ROUTES: Record<string, SimApi> = {
  '/v1/chat/completions': 'chat',
  '/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/responses': 'responses',
  '/v1/messages': 'messages',
  '/messages': 'messages',
};

function readBody(req: IncomingMessage, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => done(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
}

function isChatBody(value: unknown): value is ChatRequestBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v['model'] === 'string' &&
    Array.isArray(v['messages']) &&
    v['messages'].every(
      (m) => typeof m === 'object' && m !== null && typeof (m as Record<string, unknown>)['role'] === 'string',
    )
  );
}

/** Starts a simulator on `options.host` (127.0.0.1) and `options.port` (0 = a free port). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const host = options.host ?? '127.0.0.1';
  const ttftMs = options.ttftMs ?? 0;
  const tokensPerSec = options.tokensPerSec ?? 0;
  const toolArgChunkChars = options.toolArgChunkChars ?? 8;
  const usage = options.usage ?? 'auto';
  const record = options.record ?? true;
  const requests: RecordedRequest[] = [];
  const embeddingRequests: EmbeddingRequest[] = [];
  const faults: Simulator['faults'] = {
    ...(options.embeddingsFault !== undefined && { embeddings: options.embeddingsFault }),
  };
  const failures = new Map<string, number>();
  const active: ActiveSet = new Set();
  const modelsBody = JSON.stringify({
    object: 'list',
    data: (options.models ?? ['sim-model']).map((id) => ({ id, object: 'model', created: 0, owned_by: 'simulator' })),
  });
  let served = 0;

  const caches = new MessagesCache();
  const serve = (api: SimApi, req: IncomingMessage, res: ServerResponse, path: string, text: string): void => {
    const fail = (status: number, message?: string, retryAfterSec?: number) =>
      sendError(res, status, message, retryAfterSec, api);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return fail(400, 'Request body is not valid JSON (simulator).');
    }
    const body = readRequest(api, raw);
    if (typeof body === 'string') return fail(400, body);
    if (record) requests.push({ path, headers: req.headers, body, api, raw: raw as Record<string, unknown> });
    if (
      options.apiKey !== undefined &&
      req.headers.authorization !== `Bearer ${options.apiKey}` &&
      (api !== 'messages' || req.headers['x-api-key'] !== options.apiKey)
    )
      return fail(401);
    const window = windowOf(body.messages) ?? options.contextWindow;
    const tokens = promptTokens(body.messages, body.tools);
    if (window !== undefined && tokens > window) {
      return sendJson(
        res,
        400,
        api === 'messages'
          ? messagesOverflowJson(window, tokens)
          : api === 'responses'
            ? responsesOverflowJson()
            : contextOverflowJson(window, tokens),
      );
    }
    let reply: Reply;
    try {
      reply = options.script?.(body) ?? planReply(body, failures, options.replyTokens);
    } catch (e) {
      if (e instanceof DirectiveError) return fail(400, `simulator: ${e.message}`);
      return fail(500, `simulator script failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    const thinking = api === 'messages' ? thinkingProblem(raw as MessagesBody, reply.reasoning) : undefined;
    if (thinking) return fail(400, thinking);
    const stream = body.stream === true;
    if (reply.html) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return void res.end('<!doctype html><html><body><h1>Welcome</h1></body></html>\n');
    }
    if (reply.error && (!stream || reply.error.afterTokens === undefined))
      return fail(reply.error.status, reply.error.message, reply.error.retryAfterSec);
    let step = 0;
    for (const m of body.messages) if (m.role === 'assistant') step++;
    const ctx: RenderContext = {
      id: `chatcmpl-sim-${++served}`,
      created: Math.floor(Date.now() / 1000),
      step,
      toolArgChunkChars: reply.toolArgChunkChars ?? toolArgChunkChars,
      includeUsage: usage === 'always' || (usage === 'auto' && body.stream_options?.include_usage === true),
    };
    const pacing: Pacing = { ttftMs: reply.ttftMs ?? ttftMs, tokensPerSec: reply.tokensPerSec ?? tokensPerSec };
    if (reply.stall) pacing.stall = reply.stall;
    if (reply.disconnect) pacing.disconnect = reply.disconnect;
    if (reply.truncate) pacing.truncate = reply.truncate;
    const encrypted =
      api === 'responses' && ((raw as ResponsesBody).include ?? []).includes('reasoning.encrypted_content');
    const cached = api === 'messages' ? caches.usage(raw as MessagesBody, body, tokens) : undefined;
    if (stream) {
      const frames = cached
        ? messagesStream(body, reply, ctx, cached)
        : api === 'responses'
          ? responsesStream(body, reply, ctx, tokens, encrypted)
          : renderStream(body, reply, ctx);
      return pumpStream(res, frames, pacing, active);
    }
    // Non-streaming answers wait ttft + stall, then arrive whole (no per-piece pacing).
    const payload = cached
      ? messagesWhole(body, reply, ctx, cached)
      : api === 'responses'
        ? responsesWhole(body, reply, ctx, tokens, encrypted)
        : renderCompletion(body, reply, ctx);
    afterDelay(res, pacing.ttftMs + (reply.stall?.ms ?? 0), active, () => {
      if (reply.disconnect) res.destroy();
      else sendJson(res, 200, payload);
    });
  };

  /** `POST /v1/embeddings`: recorded, then refused while `faults.embeddings` names a status. */
  const embeddings = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    let parsed: ReturnType<typeof readEmbeddingRequest>;
    try {
      parsed = readEmbeddingRequest(JSON.parse(text));
    } catch {
      return sendError(res, 400, 'Request body is not valid JSON (simulator).');
    }
    if (typeof parsed === 'string') return sendError(res, 400, parsed);
    if (record) embeddingRequests.push({ model: parsed.model, input: parsed.input });
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`)
      return sendError(res, 401);
    if (faults.embeddings !== undefined) return sendError(res, faults.embeddings);
    sendJson(res, 200, embeddingsAnswer(parsed));
  };

  const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const api = req.method === 'POST' ? ROUTES[path] : undefined;
    if (api) {
      readBody(req, (text) => serve(api, req, res, path, text));
    } else if (req.method === 'POST' && (path === '/v1/embeddings' || path === '/embeddings')) {
      readBody(req, (text) => embeddings(req, res, text));
    } else if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      sendJson(res, 200, modelsBody);
    } else {
      req.resume();
      sendError(res, 404, `No route ${req.method ?? ''} ${path} (simulator).`);
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${hostInUrl}:${port}/v1`,
    port,
    requests,
    embeddingRequests,
    faults,
    close: async () => {
      for (const cancel of [...active]) cancel();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
