/** `mcpServers` and `a2aAgents`: the agent's tool servers, whose names share one space (`serverNameSchema`). */
import { z } from 'zod';
import { positiveInt } from './numbers.ts';
import { oauthSchema } from './oauth-schema.ts';
import { serverFeatureKeys } from './server-features.ts';

const stringMap = z.record(z.string(), z.string());

/** A remote server's forward proxy (src/egress/proxy.ts): a URL, `false` for none, absent for the environment's. */
export const proxySetting = z
  .union([z.url({ protocol: /^https?$/ }), z.literal(false)])
  .optional()
  .describe(
    'The forward proxy its requests (OAuth ones too) go through: an `http:` or `https:` URL (credentials in it are sent as `Proxy-Authorization`; https targets through `CONNECT`), or `false` for none. Default: `HTTPS_PROXY` / `HTTP_PROXY` unless `NO_PROXY` names the host.',
  );

const MCP_PROTOCOL_SETTINGS = ['auto', '2025-11-25', '2026-07-28'] as const;
export type McpProtocolSetting = (typeof MCP_PROTOCOL_SETTINGS)[number];

const serverCommon = {
  description: z
    .string()
    .optional()
    .describe("Shown in the server's record (`GET /api/mcp/servers`, `mcpServerStatus` frames)."),
  timeout: positiveInt(60_000).describe(
    'Bound on every request to the server, in ms; a request that times out (or is cancelled) is sent `notifications/cancelled`. A server whose questions people answer needs a long one.',
  ),
  maxResultBytes: positiveInt(10 * 1024 * 1024).describe(
    'Largest single message (a result, a resource) read from the server, in bytes; a larger one fails its call.',
  ),
  required: z
    .boolean()
    .default(false)
    .describe(
      '`true`: the service is not ready (`GET /api/health/ready` answers 503) while this server is not connected.',
    ),
  idempotent: z
    .boolean()
    .default(false)
    .describe(
      '`true`: calling any of its tools twice does no harm, so a turn resumed after agentd stopped mid-call runs the call again (as it does for a tool annotated `readOnlyHint` or `idempotentHint`); otherwise the model is told the call was interrupted.',
    ),
  protocolVersion: z
    .enum(MCP_PROTOCOL_SETTINGS)
    .default('auto')
    .describe(
      "The MCP protocol revision spoken to the server: auto (default: the server's era, found by server/discover with a fallback to initialize), 2025-11-25 or 2026-07-28",
    ),
  ...serverFeatureKeys,
};

export const stdioServerSchema = z
  .strictObject({
    type: z.literal('stdio'),
    command: z
      .string()
      .min(1)
      .describe(
        "The program to start: a name found on `PATH`, or a path (one starting with `./` or `../` is relative to the agent file's folder).",
      ),
    args: z
      .array(z.string())
      .default([])
      .describe("Its arguments; those starting with `./` or `../` are relative to the agent file's folder."),
    env: stringMap
      .default({})
      .describe(
        "Its environment besides `PATH` and `HOME` (nothing else of agentd's environment is passed on); values are redacted everywhere.",
      ),
    cwd: z
      .string()
      .optional()
      .describe("Its working folder, relative to the agent file's folder. Default: agentd's working folder."),
    ...serverCommon,
  })
  .describe('A child process that speaks MCP on stdin/stdout (its stderr goes to the log at debug level).');

export const httpServerSchema = z
  .strictObject({
    type: z.literal('http'),
    baseUrl: z.url().describe("The server's MCP endpoint, e.g. `https://notes.example.com/mcp`."),
    headers: stringMap
      .default({})
      .describe('Sent with every request, e.g. `Authorization: Bearer $NOTES_TOKEN`; values are redacted everywhere.'),
    oauth: oauthSchema.optional(),
    proxy: proxySetting,
    ...serverCommon,
  })
  .describe(
    'A server reached over Streamable HTTP, falling back to the older SSE transport when it answers that handshake with a 4xx.',
  );

export const mcpServerConfigSchema = z.discriminatedUnion('type', [stdioServerSchema, httpServerSchema]);

export const a2aAgentSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^https?$/ })
      .describe("The agent's base URL (`http:` or `https:`); its card is `<url>/.well-known/agent-card.json`."),
    headers: stringMap
      .default({})
      .describe(
        "Sent with every request, the card's included, e.g. `Authorization: Bearer $PEER_KEY`; values are redacted everywhere.",
      ),
    timeout: positiveInt(120_000).describe('Bound on the card fetch and on each call (the whole remote task), in ms.'),
    description: z.string().optional().describe("Shown in the server's record. Default: `A2A agent`."),
    proxy: proxySetting,
  })
  .describe(
    'A remote A2A agent (v1.0 or 0.3): each skill of its card is a tool `<name>--<skillId>` taking `{ message }`, listed, called, restarted and removed like a tool server.',
  );
export type A2aAgentConfig = z.output<typeof a2aAgentSchema>;

/**
 * The server id of the built-in memory tools (src/memory/tools.ts): outside `serverNameSchema`'s names (a `:`), so no
 * configured or runtime-connected tool server can take it — a server named `memory` (the reference memory server's
 * usual name) sits beside them. A toolPolicy rule names it as `server: agentd:memory`.
 */
export const MEMORY_SERVER_ID = 'agentd:memory';

/** A tool server's name: also a REST path segment, so never `.` or `..` (a client would resolve them away). */
export const serverNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9_.-]{1,64}$/, 'use 1-64 letters, digits, "_", "." or "-"')
  .refine((name) => name !== '.' && name !== '..', 'a name of only dots cannot be addressed in a URL path');
