/**
 * AG-UI on the front end: `GET <agUi.path>/capabilities` (in the route table) and the `POST <agUi.path>` run
 * endpoint (docs/ag-ui.md), through the admission chain like /a2a. Refusals, and a body that is not a
 * `RunAgentInput`, are the REST error envelope; another path under it is 404 after the chain. A run answers 200
 * as SSE or, when `Accept` asks, protobuf (encoding.ts), written with backpressure.
 */
import { z } from 'zod';
import type { EngineRequest, EngineResponse } from '../engine/index.ts';
import {
  agentCapabilities,
  encodeEvents,
  wantsProtobuf,
  PROTO_MEDIA_TYPE,
  SSE_MEDIA_TYPE,
  type AgUiFace,
  type CapabilitiesConfig,
} from '../../ag-ui-face/index.ts';
import type { AgentConfig } from '../../config/schema.ts';
import { textTooDeep } from '../../json-depth.ts';
import { MethodNotAllowed, PathNotFound, requestFacts, type EndpointDeps } from '../admission.ts';
import { jsonOrUndefined, readBody, tooDeepError } from '../body.ts';
import { streamReply } from '../relay.ts';
import { errorReply, send } from '../respond.ts';
import { defineRoute, documentedOnly, type Route } from '../route.ts';
import { AppError } from '../../errors/index.ts';
import { RESPONSES } from './shapes.ts';

export type AgUiRoutesConfig = CapabilitiesConfig & Pick<AgentConfig, 'agUi'>;

/** `GET <path>/capabilities` (none when `agUi.enabled` is false). */
export function agUiRoutes(config: AgUiRoutesConfig | undefined): Route[] {
  if (!config?.agUi.enabled) return [];
  return [
    defineRoute({
      method: 'GET',
      path: `${config.agUi.path}/capabilities`,
      summary: `What the AG-UI face supports (AgentCapabilities of @ag-ui/core; runs at POST ${config.agUi.path})`,
      response: RESPONSES.agUiCapabilities,
      handler: () => ({ body: agentCapabilities(config) }),
    }),
  ];
}

/** `POST <path>` as the OpenAPI document describes it; served by `createAgUiEndpoint`, never routed. */
export function agUiEndpointDoc(config: AgUiRoutesConfig | undefined): Route[] {
  if (!config?.agUi.enabled) return [];
  return [
    documentedOnly({
      method: 'POST',
      path: config.agUi.path,
      summary: 'Run the agent over AG-UI (RunAgentInput → events as text/event-stream, or protobuf when Accept asks)',
      largeBody: true,
      doc: {
        body: z
          .looseObject({ threadId: z.string(), runId: z.string(), messages: z.array(z.unknown()) })
          .describe("AG-UI's RunAgentInput"),
        contentType: SSE_MEDIA_TYPE,
        contentDescription: 'AG-UI events, one `data:` line each, from RUN_STARTED to RUN_FINISHED or RUN_ERROR',
        errors: ['INVALID_REQUEST', 'MISSING_FIELD'],
        example: {
          threadId: 'ag-ui-example',
          runId: 'ag-ui-example-run',
          messages: [{ id: 'm1', role: 'user', content: 'Hello' }],
        },
      },
    }),
  ];
}

export interface AgUiEndpointDeps extends EndpointDeps {
  face: AgUiFace;
  path: string;
}

export function createAgUiEndpoint(deps: AgUiEndpointDeps) {
  const refuse = (err: unknown, status?: number) => errorReply(err, deps.clock.now(), status);
  return (req: EngineRequest, res: EngineResponse): void => {
    const method = req.method.toUpperCase();
    const headers = req.headers as Record<string, string>;
    const ip = deps.clientIp(req);
    const body = method === 'POST' ? () => readBody(req, deps.maxBodyBytes) : undefined;
    const route = (): void => {
      if (req.path !== deps.path) throw new PathNotFound(req.path);
      if (method !== 'POST') throw new MethodNotAllowed(method, deps.path, 'POST');
    };
    let principal: string | undefined;
    let extra: Record<string, string> = {};
    let streaming = false;
    const run = async () => {
      const verdict = await deps.admission.admit(requestFacts(method, headers, ip), { route, body });
      if (verdict.outcome === 'refused') return send(res, refuse(verdict.error, verdict.status), verdict.headers);
      if (verdict.outcome === 'preflight') return send(res, { status: 204, headers: {}, body: '' }, verdict.headers);
      principal = verdict.principal.name;
      extra = verdict.headers;
      const text = (verdict.body ?? Buffer.alloc(0)).toString('utf8');
      if (textTooDeep(text)) throw tooDeepError('RunAgentInput');
      const parsed = jsonOrUndefined(text);
      if (parsed === undefined) throw new AppError('INVALID_REQUEST', 'The body is not JSON');
      const events = await deps.face.run(parsed, {
        sessions: deps.sessionsOf(verdict.principal, ip),
        principal: verdict.principal,
        signal: res.signal,
      });
      const protobuf = wantsProtobuf(headers.accept);
      const type = protobuf ? PROTO_MEDIA_TYPE : SSE_MEDIA_TYPE;
      streaming = true;
      await streamReply(
        res,
        200,
        { ...extra, 'Content-Type': type, 'Cache-Control': 'no-cache' },
        encodeEvents(events, protobuf),
      );
    };
    run().catch((err: unknown) => {
      if (!(err instanceof AppError)) deps.log.error({ err, principal }, 'ag-ui request failed');
      if (!streaming) send(res, refuse(err), extra);
      else if (!res.ended) res.end(); // the events were cut: the client's verifier sees no RUN_FINISHED
    });
  };
}
