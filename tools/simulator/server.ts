/**
 * The model simulator's HTTP face (node:http, no framework): an OpenAI Chat Completions–compatible
 * endpoint whose answers are scripted per request (see directives.ts and plan.ts), so many clients
 * can share one simulator. Nothing is logged per request; every instance owns its own state.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DirectiveError } from './directives.ts';
import { planReply, windowOf } from './plan.ts';
import { contextOverflowJson, errorJson, promptTokens, renderCompletion, renderStream, type RenderContext } from './render.ts';
import { afterDelay, pumpStream, type ActiveSet, type Pacing } from './stream.ts';
import type { ChatRequestBody, RecordedRequest, Reply, Simulator, SimulatorOptions } from './types.ts';

const JSON_HEADERS = { 'Content-Type': 'application/json' };

function sendJson(res: ServerResponse, status: number, body: string, extra?: Record<string, string>): void {
  res.writeHead(status, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body), ...extra });
  res.end(body);
}

function sendError(res: ServerResponse, status: number, message?: string, retryAfterSec?: number): void {
  sendJson(res, status, errorJson(status, message), retryAfterSec === undefined ? undefined : { 'Retry-After': String(retryAfterSec) });
}

function readBody(req: IncomingMessage, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => done(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
}

function isChatBody(value: unknown): value is ChatRequestBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v['model'] === 'string' && Array.isArray(v['messages']) && v['messages'].every((m) => typeof m === 'object' && m !== null && typeof (m as Record<string, unknown>)['role'] === 'string');
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
  const failures = new Map<string, number>();
  const active: ActiveSet = new Set();
  const modelsBody = JSON.stringify({
    object: 'list',
    data: (options.models ?? ['sim-model']).map((id) => ({ id, object: 'model', created: 0, owned_by: 'simulator' })),
  });
  let served = 0;

  const chat = (req: IncomingMessage, res: ServerResponse, path: string, text: string): void => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return sendError(res, 400, 'Request body is not valid JSON (simulator).');
    }
    if (!isChatBody(body)) return sendError(res, 400, 'Request needs "model" (string) and "messages" (array of {role}) (simulator).');
    if (record) requests.push({ path, headers: req.headers, body });
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) return sendError(res, 401);
    const window = windowOf(body.messages) ?? options.contextWindow;
    if (window !== undefined) {
      const tokens = promptTokens(body.messages, body.tools);
      if (tokens > window) return sendJson(res, 400, contextOverflowJson(window, tokens));
    }
    let reply: Reply;
    try {
      reply = options.script?.(body) ?? planReply(body, failures, options.replyTokens);
    } catch (e) {
      if (e instanceof DirectiveError) return sendError(res, 400, `simulator: ${e.message}`);
      return sendError(res, 500, `simulator script failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    const stream = body.stream === true;
    if (reply.error && (!stream || reply.error.afterTokens === undefined)) {
      return sendError(res, reply.error.status, reply.error.message, reply.error.retryAfterSec);
    }
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
    if (stream) return pumpStream(res, renderStream(body, reply, ctx), pacing, active);
    // Non-streaming answers wait ttft + stall, then arrive whole (no per-piece pacing).
    const payload = renderCompletion(body, reply, ctx);
    afterDelay(res, pacing.ttftMs + (reply.stall?.ms ?? 0), active, () => {
      if (reply.disconnect) res.destroy();
      else sendJson(res, 200, payload);
    });
  };

  const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      readBody(req, (text) => chat(req, res, path, text));
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
    close: async () => {
      for (const cancel of [...active]) cancel();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
