/** `server`: the network service (address, CORS, limits, credentials, inspection, tracing, the MCP face's policy). */
import { isIP } from 'node:net';
import { z } from 'zod';
import { positiveInt } from './numbers.ts';
import { authSchema } from './auth-schema.ts';
import { limitsSchema } from './limits-schema.ts';
import { allowedCommandsSchema } from './runtime-schema.ts';

export const corsSchema = z.strictObject({
  origins: z
    .array(z.string())
    .default([])
    .describe(
      "Origins allowed cross-origin (exact, or `*` for any); empty: no cross-origin access, and a browser's WebSocket only from a same-origin page.",
    ),
  methods: z
    .array(z.string())
    .default(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
    .describe('Methods a preflight allows.'),
  headers: z
    .array(z.string())
    .default(['Content-Type', 'Authorization'])
    .describe(
      "Request headers a preflight allows (on `/mcp` also MCP's own: `MCP-Protocol-Version`, `Mcp-Session-Id`, `Last-Event-ID`).",
    ),
  maxAge: z
    .number()
    .int()
    .nonnegative()
    .default(86_400)
    .describe("How long a browser may keep a preflight's answer, in seconds."),
});
export const serverSchema = z.strictObject({
  host: z
    .string()
    .optional()
    .describe(
      'The bind address; a non-loopback one is refused unless `server.auth` sets `apiKey`, `keys` or `jwt` (`adminKey` alone leaves `chat` open). `--host` overrides it. Default: `127.0.0.1`.',
    ),
  port: z
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .describe('The HTTP port; `0` picks a free one (logged). `--web-port` overrides it. Default: `3001`.'),
  cors: corsSchema.prefault({}).describe('Cross-origin access from browsers (`/api`, `/mcp`, the WebSocket).'),
  limits: limitsSchema
    .prefault({})
    .describe('Rate limits, caps and body sizes; every limit is here, so load tests raise them without code changes.'),
  auth: authSchema.prefault({}),
  inspect: z
    .boolean()
    .default(false)
    .describe('Serve the live state-machine inspector (`/inspect`, `/inspect/ws`); also `--inspect`.'),
  inspectContent: z
    .boolean()
    .default(false)
    .describe(
      'Inspection frames carry prompt, reply and tool text too, still redacted (otherwise such values read `[content]`); also `--inspect-content`.',
    ),
  inspectRelay: z
    .url({ protocol: /^wss?$/ })
    .optional()
    .describe(
      'Also push the inspection stream to this external inspector server (`ws:` or `wss:`), e.g. `ws://127.0.0.1:8080`; also `--inspect-relay`.',
    ),
  tracing: z
    .boolean()
    .default(false)
    .describe(
      'OpenTelemetry traces over OTLP/HTTP; the standard `OTEL_*` variables configure the exporter and can turn tracing on too.',
    ),
  requestTimeoutMs: positiveInt(300_000).describe(
    "How long `POST /api/message-sync`, `/mcp`'s `chat_with_agent` and a blocking A2A `SendMessage` wait for the turn's answer, in ms.",
  ),
  resumeTurns: z
    .boolean()
    .default(true)
    .describe(
      'A turn left running by a process that stopped (killed, crashed, a dead cluster owner) goes on under its own `turnId` when its session opens again: its unfinished model step is asked again, a tool call without a result runs again only if its tool is read-only or idempotent (else the model is told it was interrupted). `false`: such a turn is ended (`owner_lost` on a cluster) or left as it was.',
    ),
  maxTurnResumptions: positiveInt(3).describe(
    'How many times one turn is resumed (`resumeTurns`); a turn whose process stopped once more is ended as `owner_lost`, so a turn that kills its process cannot loop.',
  ),
  allowedHosts: z
    .array(z.string())
    .default([])
    .describe(
      '`Host` header values accepted besides loopback names (behind a reverse proxy). While bound to a loopback address any other host is refused (DNS rebinding); on other binds, once set, only these and loopback names pass.',
    ),
  trustedProxies: z
    .array(z.string().refine((ip) => isIP(ip) !== 0, 'must be an IP address'))
    .default([])
    .describe(
      'IP addresses of proxies in front of agentd: for their requests the client is the right-most untrusted `X-Forwarded-For` address (per-IP limits, logs), and the A2A card follows `X-Forwarded-Host` and `X-Forwarded-Proto`. Empty: the peer is the client.',
    ),
  mcp: z
    .strictObject({
      exposeTools: z
        .boolean()
        .default(false)
        .describe("Also offer the connected tool servers' tools through `/mcp`, under the names the model sees."),
      runtimeConnect: z
        .boolean()
        .default(true)
        .describe(
          'Serve the runtime connects (`POST /api/connect-server`, `POST /api/connect-a2a-agent`); `false` refuses them with 403.',
        ),
      allowedCommands: allowedCommandsSchema,
      allowPrivateNetworks: z
        .boolean()
        .optional()
        .describe('The older name of `egress.allowPrivateNetworks`, read when `egress` does not set it.'),
      allowedHosts: z
        .array(z.string().min(1))
        .optional()
        .describe('The older name of `egress.allowedHosts`, read when `egress` does not set it.'),
      maxHops: z
        .number()
        .int()
        .min(0)
        .max(32)
        .default(3)
        .describe(
          'Longest agent-to-agent chain a `chat_with_agent` call or an A2A message may end; one that would pass it is refused.',
        ),
    })
    .prefault({})
    .describe(
      "The agent's own MCP face (`/mcp`, `--mcp-transport stdio`), and what runtime connects may start or reach.",
    ),
});
