/**
 * AG-UI on the front end, through the face endpoint kit (src/http/face-endpoint.ts): `GET <agUi.path>/capabilities`
 * (in the route table) and the `POST <agUi.path>` run endpoint (docs/ag-ui.md). Refusals, a body that is not JSON
 * (415 when not declared `application/json`) or not a `RunAgentInput`, are the REST error envelope; another path
 * under it is 404 after the chain. A run answers 200 as SSE or, when `Accept` asks, protobuf (encoding.ts), written
 * with backpressure.
 */
import { z } from 'zod';
import type { AgentConfig } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import { MethodNotAllowed, PathNotFound } from '../http/admission.ts';
import type { EngineRequest } from '../http/engine/index.ts';
import { faceEndpoint, jsonBody, type FaceContext, type FaceMount } from '../http/face-endpoint.ts';
import { errorReply } from '../http/respond.ts';
import { defineRoute, documentedOnly, type Route } from '../http/route.ts';
import { agentCapabilities, type CapabilitiesConfig } from './capabilities.ts';
import { encodeEvents, wantsProtobuf, PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE } from './encoding.ts';
import type { CallAppTool } from './app-requests.ts';
import { createAgUiFace, type AgUiFace, type AgUiFaceDeps } from './face.ts';

export type AgUiRoutesConfig = CapabilitiesConfig & Pick<AgentConfig, 'agUi'>;

/** `GET <path>/capabilities`. */
export function agUiRoutes(config: AgUiRoutesConfig): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: `${config.agUi.path}/capabilities`,
      summary: `What the AG-UI face supports (AgentCapabilities of @ag-ui/core; runs at POST ${config.agUi.path})`,
      response: z.record(z.string(), z.unknown()).describe("AG-UI's AgentCapabilities (@ag-ui/core)"),
      handler: () => ({ body: agentCapabilities(config) }),
    }),
  ];
}

/** `POST <path>` as the OpenAPI document describes it; served by `createAgUiEndpoint`, never routed. */
export function agUiEndpointDoc(config: AgUiRoutesConfig): Route[] {
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

const runInput = jsonBody('RunAgentInput');
/** The body as JSON; it must be some (`RunAgentInput` is read by the face). */
function parse(raw: Buffer, req: EngineRequest): unknown {
  const parsed = runInput(raw, req);
  if (parsed === undefined) throw new AppError('INVALID_REQUEST', 'The body is not JSON');
  return parsed;
}

export function createAgUiEndpoint(face: AgUiFace, path: string, ctx: FaceContext) {
  return faceEndpoint<void, unknown>(ctx, {
    name: 'ag-ui',
    route: (req, method) => {
      if (req.path !== path) throw new PathNotFound(req.path);
      if (method !== 'POST') throw new MethodNotAllowed(method, path, 'POST');
    },
    encodeError: (err, status) => errorReply(err, ctx.clock.now(), status),
    parse,
    call: async ({ req, body, principal, sessions, signal }) => {
      const events = await face.run(body, { sessions, principal, signal });
      const protobuf = wantsProtobuf(req.headers.accept);
      const contentType = protobuf ? PROTO_MEDIA_TYPE : SSE_MEDIA_TYPE;
      return { kind: 'stream', events: encodeEvents(events, protobuf), contentType };
    },
  });
}

export type AgUiMountDeps = Pick<AgUiFaceDeps, 'bus' | 'follower' | 'clock'> & { config: AgUiRoutesConfig };

/** `<agUi.path>` and the paths under it (404) but its capabilities, a REST route. */
export function agUiMount(deps: AgUiMountDeps): FaceMount {
  const { path, clientTools } = deps.config.agUi;
  return {
    name: 'ag-ui',
    match: (p) => p === path || (p.startsWith(`${path}/`) && p !== `${path}/capabilities`),
    serve: (ctx) => {
      const { bus, follower, clock } = deps;
      const callAppTool: CallAppTool = (payload) => bus.execute('agent.appToolCall', payload);
      const face = createAgUiFace({ bus, follower, clock, mayApprove: ctx.mayApprove, clientTools, callAppTool });
      return createAgUiEndpoint(face, path, ctx);
    },
    routes: () => agUiRoutes(deps.config),
    docs: () => agUiEndpointDoc(deps.config),
  };
}
