/**
 * The one shell of every face's endpoint (/mcp, /a2a, /a2a/rest, AG-UI) and the mount a face plugs in with.
 * `faceEndpoint` runs: the admission chain (its `route` step is the face's) → a refusal in the face's encoding with
 * its status, or the preflight's 204 → the body (`parse`) → the face's `call` → its answer as JSON, a stream or a
 * relayed web `Response`.
 * - Every answer after the admission carries the verdict's headers (rate limit, CORS); `call` may add to them.
 * - The body is read for POST only. `parse` throws to refuse it: a WrongContentType is answered 415, any other
 *   error at its table status, both through `encodeError`.
 * - An error `call` throws before the answer began is encoded (`encodeFailure`, else `encodeError`); after a stream
 *   began the response just ends (its head went out). Only an error that is no AppError is logged.
 */
import type { Principal, SessionAccess } from '../auth/index.ts';
import { AppError } from '../errors/index.ts';
import { textTooDeep } from '../json-depth.ts';
import type { Metrics } from '../metrics/index.ts';
import { requestFacts, type EndpointDeps } from './admission.ts';
import { jsonOrUndefined, readBody, requireJsonType, tooDeepError, WrongContentType } from './body.ts';
import type { EngineRequest, HttpHandler } from './engine/index.ts';
import type { WindowLimiter } from './limits.ts';
import { relayResponse, streamReply } from './relay.ts';
import { jsonReply, send, type Reply } from './respond.ts';
import type { Route } from './route.ts';

/** What a face's call answers: a JSON body (200), a stream of pieces (200), or a web Response relayed as it is. */
export type FaceAnswer =
  | { kind: 'json'; body: unknown }
  | { kind: 'stream'; events: AsyncIterable<string | Uint8Array>; contentType: string }
  | { kind: 'response'; response: Response; close: () => Promise<void> };

/** One admitted request, as the face's `call` sees it. */
export interface FaceCall<R, P> {
  req: EngineRequest;
  /** What the `route` step returned. */
  route: R;
  /** What `parse` returned. */
  body: P;
  principal: Principal;
  sessions: SessionAccess;
  ip: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** Sent with the answer (the verdict's); add to them to send more. */
  headers: Record<string, string>;
}

export interface FaceEndpointSpec<R, P> {
  /** Names the face in its log lines (`<name> request failed`). */
  name: string;
  /** Request headers a CORS preflight allows beyond `server.cors.headers`. */
  allowHeaders?: readonly string[];
  /** The admission's route step: throws MethodNotAllowed (405), PathNotFound (404) or another AppError to refuse. */
  route: (req: EngineRequest, method: string) => R;
  /** The face's error answer; `status` overrides the table's (a refusal's 404, 405; a wrong Content-Type's 415). */
  encodeError: (err: unknown, status: number | undefined, req: EngineRequest) => Reply;
  /** The answer to an error `call` threw (default `encodeError`). */
  encodeFailure?: (err: unknown, req: EngineRequest) => Reply;
  /** Told of each refusal of the admission before it is answered (metrics). */
  onRefused?: (error: AppError) => void;
  /** The body (empty when none was read); throws to refuse it. `jsonBody` is the usual one. */
  parse: (raw: Buffer, req: EngineRequest, route: R) => P;
  call: (call: FaceCall<R, P>) => Promise<FaceAnswer>;
}

/**
 * A parser of a JSON body, lenient: `undefined` when it does not parse (each face answers that its own way); deeper
 * than MAX_JSON_DEPTH is refused (`what` names the body). The Content-Type must be `application/json` or one of
 * `types` (else WrongContentType, 415); `'any'` leaves it to the face (MCP's SDK answers 415 itself).
 */
export const jsonBody =
  (what: string, types: readonly string[] | 'any' = []) =>
  (raw: Buffer, req: EngineRequest): unknown => {
    if (types !== 'any') requireJsonType(req.headers['content-type'] ?? '', types);
    const text = raw.toString('utf8');
    if (textTooDeep(text)) throw tooDeepError(what);
    return jsonOrUndefined(text);
  };

const NO_BODY = Buffer.alloc(0);
const NO_CONTENT: Reply = { status: 204, headers: {}, body: '' };

/** The face's endpoint on the front end's admission chain (see the file's comment). */
export function faceEndpoint<R, P>(deps: EndpointDeps, face: FaceEndpointSpec<R, P>): HttpHandler {
  const failure = (err: unknown, req: EngineRequest) =>
    face.encodeFailure ? face.encodeFailure(err, req) : face.encodeError(err, undefined, req);
  return (req, res) => {
    const method = req.method.toUpperCase();
    const ip = deps.clientIp(req);
    let principal: string | undefined;
    let headers: Record<string, string> = {};
    let started = false;
    const run = async () => {
      const facts = requestFacts(method, req.headers, ip, face.allowHeaders && { allowHeaders: face.allowHeaders });
      const verdict = await deps.admission.admit(facts, {
        route: () => face.route(req, method),
        body: method === 'POST' ? () => readBody(req, deps.maxBodyBytes) : undefined,
      });
      headers = verdict.headers;
      if (verdict.outcome === 'preflight') return send(res, NO_CONTENT, headers);
      if (verdict.outcome === 'refused') {
        face.onRefused?.(verdict.error);
        return send(res, face.encodeError(verdict.error, verdict.status, req), headers);
      }
      principal = verdict.principal.name;
      let body: P;
      try {
        body = face.parse(verdict.body ?? NO_BODY, req, verdict.route);
      } catch (err) {
        return send(res, face.encodeError(err, err instanceof WrongContentType ? 415 : undefined, req), headers);
      }
      const answer = await face.call({
        req,
        route: verdict.route,
        body,
        principal: verdict.principal,
        sessions: deps.sessionsOf(verdict.principal, ip),
        ip,
        signal: res.signal,
        headers,
      });
      if (answer.kind === 'json') return send(res, jsonReply(200, answer.body), headers);
      started = true;
      if (answer.kind === 'stream') {
        const head = { ...headers, 'Content-Type': answer.contentType, 'Cache-Control': 'no-cache' };
        return streamReply(res, 200, head, answer.events);
      }
      try {
        await relayResponse(res, answer.response, headers);
      } finally {
        await answer.close();
      }
    };
    run().catch((err: unknown) => {
      if (!(err instanceof AppError)) deps.log.error({ err, path: req.path, principal }, `${face.name} request failed`);
      if (!started) send(res, failure(err, req), headers);
      else if (!res.ended) res.end(); // the stream was cut: its reader sees no end of its own
    });
  };
}

/** What the front end lends a face's endpoint: the admission chain with its deps, and the services around it. */
export interface FaceContext extends EndpointDeps {
  /** Whether a principal may answer questions (the `approve` route scope of server.auth). */
  mayApprove: (principal: Principal) => boolean;
  /** The per-IP request window (`limits.rest`) the admission takes one point of. */
  limiter: WindowLimiter;
  metrics?: Pick<Metrics, 'rejected'>;
}

/**
 * A face on the front end (built in app.ts, one per enabled face): the paths it answers (the REST handler answers
 * the rest), its endpoint once the front end lends it the admission chain, its REST routes (in the route table) and
 * the routes it serves itself, documented only (the OpenAPI document).
 */
export interface FaceMount {
  name: string;
  match: (path: string) => boolean;
  serve: (ctx: FaceContext) => HttpHandler;
  routes?: () => Route[];
  docs?: () => Route[];
}
