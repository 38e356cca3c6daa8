import { isIP } from 'node:net';
import { z } from 'zod';
import { serverFeatureKeys } from './server-features.ts';
import { unnamedSessionsSchema } from './unnamed-sessions.ts';

import { llmSchema } from './llm-schema.ts';

export {
  LLM_APIS,
  PROVIDERS,
  llmSchema,
  llmFallbackSchema,
  type LlmApi,
  type LlmFallbackConfig,
  type Provider,
} from './llm-schema.ts';

const stringMap = z.record(z.string(), z.string());

/** The values of `mcpServers.<name>.protocolVersion`. */
export const MCP_PROTOCOL_SETTINGS = ['auto', '2025-11-25', '2026-07-28'] as const;
export type McpProtocolSetting = (typeof MCP_PROTOCOL_SETTINGS)[number];

const serverCommon = {
  description: z
    .string()
    .optional()
    .describe("Shown in the server's record (`GET /api/mcp/servers`, `mcpServerStatus` frames)."),
  /** Milliseconds that bound every request to the server. */
  timeout: z
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe(
      'Bound on every request to the server, in ms; a request that times out (or is cancelled) is sent `notifications/cancelled`. A server whose questions people answer needs a long one.',
    ),
  /** Largest result (one message) read from the server, in bytes; a larger one fails its call. */
  maxResultBytes: z
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024)
    .describe(
      'Largest single message (a result, a resource) read from the server, in bytes; a larger one fails its call.',
    ),
  /** The service is not ready (`/api/health/ready` answers 503) while this server is not connected. */
  required: z
    .boolean()
    .default(false)
    .describe(
      '`true`: the service is not ready (`GET /api/health/ready` answers 503) while this server is not connected.',
    ),
  /**
   * The MCP protocol revision spoken to the server: `auto` finds the era the server speaks (src/tools/mcp/eras.ts),
   * `2025-11-25` speaks the 2025 era only (`initialize`), `2026-07-28` the 2026-07-28 era only (`server/discover`).
   */
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

/** JWS algorithms of a `private_key_jwt` client assertion (RFC 7523); default: the one the key's type implies. */
export const JWT_SIGNING_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/**
 * OAuth 2.1 for an `http` server (docs/tool-servers.md, "OAuth-protected tool servers"). `authorization_code`: an admin signs in
 * once in a browser (PKCE; the client is registered dynamically unless `clientId` or `clientMetadataUrl` is given);
 * `client_credentials`: machine to machine with `clientId` and `clientSecret` or a private key (`private_key_jwt`).
 * Tokens are kept in the storage medium, never in the config.
 */
export const oauthSchema = z
  .strictObject({
    grant: z
      .enum(['authorization_code', 'client_credentials'])
      .default('authorization_code')
      .describe(
        '`authorization_code`: a person (an admin) signs in once in a browser, with PKCE; `client_credentials`: machine to machine, with `clientId` and `clientSecret` or `privateKey`.',
      ),
    /** A client registered beforehand (else dynamic client registration, RFC 7591, for `authorization_code`). */
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A client registered with the authorization server beforehand. Default: dynamic client registration (RFC 7591) as a public client.',
      ),
    /** Its secret, e.g. `$MCP_CLIENT_SECRET` (redacted everywhere). */
    clientSecret: z
      .string()
      .min(1)
      .optional()
      .describe("That client's secret when it is confidential, e.g. `$NOTES_SECRET` (redacted everywhere)."),
    /** That client authenticates with a JWT signed by this key instead of a secret (RFC 7523 `private_key_jwt`). */
    privateKey: z
      .string()
      .min(1)
      .optional()
      .describe(
        "That client's private key (PKCS #8 PEM), e.g. `$NOTES_SIGNING_KEY`: it authenticates to the token endpoint with a JWT signed by it (`private_key_jwt`, RFC 7523) instead of a secret. Redacted everywhere.",
      ),
    privateKeyFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The same key read from a file (relative to the agent file's folder), at each token request, so a rotated key needs no restart. Agent files only: a server connected at runtime sends `privateKey`.",
      ),
    signingAlgorithm: z
      .enum(JWT_SIGNING_ALGORITHMS)
      .optional()
      .describe(
        "The JWS algorithm of those JWTs. Default: the key's own (`RS256` for RSA, `ES256`/`ES384`/`ES512` for the P-256/P-384/P-521 curves, `EdDSA` for Ed25519).",
      ),
    /** A client ID metadata document's https URL (CIMD): used as the client_id where the authorization server supports them. */
    clientMetadataUrl: z
      .url({ protocol: /^https$/ })
      .optional()
      .describe(
        'The `https:` URL of a client ID metadata document describing agentd (its `client_id` is this URL, its `redirect_uris` list `redirectUrl`): an authorization server that advertises `client_id_metadata_document_supported` gets it as the `client_id`, with no registration. Others: `clientId`, else dynamic registration.',
      ),
    /** Scopes to ask for (default: what the server's metadata lists). */
    scopes: z
      .array(z.string().min(1))
      .optional()
      .describe("Scopes to ask for. Default: the scopes the server's metadata lists."),
    /** Where the browser returns (default `http://127.0.0.1:<port>/api/oauth/callback`): set it behind a proxy or a public name. */
    redirectUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        'Where the browser returns from signing in (`http:` or `https:`); set it when agentd is reached through another name, the same for every instance behind one load balancer. Default: `http://127.0.0.1:<port>/api/oauth/callback`.',
      ),
    /** Sign-ins in a row the server may still refuse before agentd stops offering one (until the server is restarted). */
    /** Whose token a tool call carries: the one sign-in of the server, or the calling principal's own. */
    per: z
      .enum(['server', 'principal'])
      .default('server')
      .describe(
        "Whose tokens the tool calls carry. `server`: one sign-in (an admin's) for everyone. `principal`: each principal signs in for itself (`POST /api/mcp/servers/{serverId}/sign-in`, or the console) and its sessions' tool calls carry its own tokens; the server's own sign-in (an admin's) still lists its tools, resources and prompts. `authorization_code` only.",
      ),
    maxSignIns: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(3)
      .describe(
        'Sign-ins in a row whose tokens the server still refuses (it keeps asking for a scope the authorization server does not grant, say) before agentd stops offering another: the server is then in `error` saying so, without a sign-in URL, until it is restarted (`POST /api/mcp/servers/{serverId}/restart`). A connection or a tool call that succeeds ends the row.',
      ),
  })
  .refine(
    (o) =>
      o.grant !== 'client_credentials' ||
      (o.clientId !== undefined &&
        (o.clientSecret !== undefined || o.privateKey !== undefined || o.privateKeyFile !== undefined)),
    {
      message: 'grant client_credentials needs clientId and clientSecret (or privateKey)',
    },
  )
  .refine((o) => [o.clientSecret, o.privateKey, o.privateKeyFile].filter((v) => v !== undefined).length <= 1, {
    message: 'give one of clientSecret, privateKey and privateKeyFile',
  })
  .refine((o) => o.per === 'server' || o.grant === 'authorization_code', {
    message: 'per: principal needs the authorization_code grant (each principal signs in as a person)',
    path: ['per'],
  })
  .refine((o) => (o.privateKey === undefined && o.privateKeyFile === undefined) || o.clientId !== undefined, {
    message: 'privateKey needs the clientId it was registered for',
    path: ['clientId'],
  })
  .describe(
    'OAuth 2.1 for a server that asks for it (its `401` names its protected resource metadata): agentd discovers the authorization server, registers itself unless `clientId` is given, and keeps the tokens in the storage medium, never in the config.',
  );
export type OAuthConfig = z.output<typeof oauthSchema>;

export const httpServerSchema = z
  .strictObject({
    type: z.literal('http'),
    baseUrl: z.url().describe("The server's MCP endpoint, e.g. `https://notes.example.com/mcp`."),
    headers: stringMap
      .default({})
      .describe('Sent with every request, e.g. `Authorization: Bearer $NOTES_TOKEN`; values are redacted everywhere.'),
    oauth: oauthSchema.optional(),
    ...serverCommon,
  })
  .describe(
    'A server reached over Streamable HTTP, falling back to the older SSE transport when it answers that handshake with a 4xx.',
  );

export const mcpServerConfigSchema = z.discriminatedUnion('type', [stdioServerSchema, httpServerSchema]);

/**
 * A remote A2A agent offered to the model as tools (docs/tool-servers.md, "A2A agents as tools"): its card is fetched from
 * `<url>/.well-known/agent-card.json` and each skill becomes a tool `<name>--<skillId>` taking `{ message }`.
 */
export const a2aAgentSchema = z
  .strictObject({
    /** The agent's base URL (its card is at `/.well-known/agent-card.json` under it). */
    url: z
      .url({ protocol: /^https?$/ })
      .describe("The agent's base URL (`http:` or `https:`); its card is `<url>/.well-known/agent-card.json`."),
    /** Sent with every request (card and calls), e.g. `Authorization: Bearer $PEER_KEY` (redacted everywhere). */
    headers: stringMap
      .default({})
      .describe(
        "Sent with every request, the card's included, e.g. `Authorization: Bearer $PEER_KEY`; values are redacted everywhere.",
      ),
    /** Milliseconds that bound the card fetch and each call (the whole remote task). */
    timeout: z
      .number()
      .int()
      .positive()
      .default(120_000)
      .describe('Bound on the card fetch and on each call (the whole remote task), in ms.'),
    description: z.string().optional().describe("Shown in the server's record. Default: `A2A agent`."),
  })
  .describe(
    'A remote A2A agent (v1.0 or 0.3): each skill of its card is a tool `<name>--<skillId>` taking `{ message }`, listed, called, restarted and removed like a tool server.',
  );
export type A2aAgentConfig = z.output<typeof a2aAgentSchema>;

/** A tool server's name (the keys of `mcpServers`; also its id in the REST paths). */
/** A tool server's name: also a REST path segment, so never `.` or `..` (a client would resolve them away). */
export const serverNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9_.-]{1,64}$/, 'use 1-64 letters, digits, "_", "." or "-"')
  .refine((name) => name !== '.' && name !== '..', 'a name of only dots cannot be addressed in a URL path');

const windowLimit = (points: number) =>
  z.strictObject({
    points: z.number().int().positive().default(points).describe('What the window allows.'),
    durationSec: z.number().int().positive().default(60).describe("The window's length, in seconds."),
  });

export const limitsSchema = z.strictObject({
  /** REST requests per IP per window. */
  rest: windowLimit(100)
    .prefault({})
    .describe(
      'HTTP requests per client IP per window (`/api`, `/mcp`, `/a2a`, WebSocket upgrades; refused ones count too).',
    ),
  /** WebSocket messages per connection per window. */
  ws: windowLimit(50).prefault({}).describe('WebSocket messages per connection per window.'),
  /**
   * WebSocket messages per IP per `ws` window, across all its connections (default 10 × `ws.points`), so
   * reconnecting does not start a fresh window.
   */
  wsPerIp: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'WebSocket messages per client IP per `ws` window, across all its connections (reconnecting does not start a fresh window). Default: 10 × `ws.points`.',
    ),
  /** Where the request and message windows are counted: `redis` shares them across every instance (default when `storage` is Redis). */
  store: z
    .enum(['memory', 'redis'])
    .optional()
    .describe(
      'Where the REST and WebSocket-per-IP windows are counted: `redis` shares them across every instance (it needs `storage.type: redis`). Default: `redis` when `storage.type` is `redis`, else `memory`.',
    ),
  /**
   * Sessions one principal may hold (anonymous callers: per IP); one more answers 429 until one is
   * deleted. Admin principals are not capped. See SECURITY.md, "Caps per principal".
   */
  sessionsPerPrincipal: z
    .number()
    .int()
    .positive()
    .default(1000)
    .describe(
      'Sessions one principal may hold (without auth: per client IP; admin principals are not capped); one more answers 429 until one is deleted. Unnamed sessions (`unnamedSessions`) are not counted.',
    ),
  unnamedSessions: unnamedSessionsSchema.prefault({}),
  /** Concurrent connections per IP: HTTP connections (idle keep-alives too) and, apart from them, WebSockets. */
  connectionsPerIp: z
    .number()
    .int()
    .positive()
    .default(10)
    .describe(
      'Concurrent connections per client IP, counted by each instance: at most this many HTTP connections (idle keep-alives included; one more is closed unanswered; peers in `trustedProxies` are not counted) and, apart from them, at most this many WebSockets (one more upgrade is answered 429; behind a trusted proxy, per forwarded client).',
    ),
  /** Largest message body (the message endpoints, /mcp) or WebSocket frame, in bytes (10 MB image + JSON overhead). */
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(14 * 1024 * 1024)
    .describe(
      'Largest message body (`message-sync`, `message`, `/mcp`, `/a2a`) or WebSocket frame, in bytes (a 10 MiB image plus JSON); also how far a WebSocket reader may fall behind before it is closed (1008).',
    ),
  /** How long a WebSocket reader may leave its connection's send buffer full without taking any of it before it is closed (1008). */
  slowReaderMs: z
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe(
      "How long a WebSocket reader may leave frames waiting in agentd (its connection's buffer full) without taking any of them before it is closed with 1008, in ms.",
    ),
  /** Largest body of every other REST route (the control endpoints), in bytes. */
  maxJsonBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe('Largest body of every other REST route, in bytes.'),
  /**
   * Largest session import (`POST /api/sessions/import`: an export's NDJSON), in bytes. It is read
   * whole into memory and checked before anything is stored, as a session's log is when it opens.
   */
  maxImportBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024)
    .describe(
      'Largest session import (`POST /api/sessions/import`), in bytes; it is read whole and checked before anything is stored.',
    ),
});

export const corsSchema = z.strictObject({
  /** Allowed origins (exact, or "*"); empty means no cross-origin access. */
  origins: z
    .array(z.string())
    .default([])
    .describe(
      "Origins allowed cross-origin (exact, or `*` for any); empty: no cross-origin access, and a browser's WebSocket only from a same-origin page.",
    ),
  methods: z
    .array(z.string())
    .default(['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'])
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

/** What a principal may do (src/auth): `chat` (messages, sessions, approvals), `inspect` (/inspect/ws, /metrics, /api/config.yaml), `admin` (everything). */
export const AUTH_SCOPES = ['chat', 'inspect', 'admin'] as const;

/** A named bearer key and the scopes it grants. */
const authKeySchema = z.strictObject({
  /** Shown in logs (never the key); unique among the keys. */
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[\w.@-]+$/, 'letters, digits and _ . @ - only')
    .describe(
      "The principal's name: shown in logs (never the key) and owning the key's sessions; unique (`api` and `admin` are the shorthands').",
    ),
  /** The bearer secret, e.g. `$AGENTD_CI_KEY`. At least 16 characters. */
  key: z
    .string()
    .min(16)
    .describe('The bearer secret, e.g. `$CI_KEY`: at least 16 characters (use 32 or more random ones).'),
  scopes: z
    .array(z.enum(AUTH_SCOPES))
    .min(1)
    .describe(
      'What the key may do: `chat` (messages, its own sessions, their approvals), `inspect` (`/inspect/ws`, `/metrics`, `/api/config.yaml`), `admin` (everything).',
    ),
});

/** Bearer JSON Web Tokens (RS256/ES256 by default) verified against a JSON Web Key Set. */
const authJwtSchema = z
  .strictObject({
    /** The `iss` every token must carry. */
    issuer: z.string().min(1).describe('The `iss` every token must carry.'),
    /** The `aud` every token must carry. */
    audience: z.string().min(1).describe('The `aud` every token must carry.'),
    /** Where the key set is fetched (refetched on an unknown `kid`, at most once per `jwksCooldownMs`). */
    jwksUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        'Where the key set is fetched (`http:` or `https:`; refetched on an unknown `kid` at most once per `jwksCooldownMs`; 5 s timeout, 256 KiB at most).',
      ),
    /** A JSON Web Key Set file, read at start. */
    jwksFile: z
      .string()
      .min(1)
      .optional()
      .describe("A JSON Web Key Set file, read at start; relative to the agent file's folder."),
    /** The claim naming the principal (`jwt:<value>` in logs). */
    subjectClaim: z.string().min(1).default('sub').describe('The claim naming the principal (`jwt:<value>`).'),
    /** The claim with the scopes: a space-separated string or an array; unknown names are ignored. */
    scopesClaim: z
      .string()
      .min(1)
      .default('scope')
      .describe('The claim with the scopes: a space-separated string or an array; unknown names are ignored.'),
    algorithms: z
      .array(z.string().min(1))
      .min(1)
      .default(['RS256', 'ES256'])
      .describe('The signature algorithms accepted.'),
    /** The least time between two fetches of `jwksUrl`. */
    jwksCooldownMs: z
      .number()
      .int()
      .nonnegative()
      .default(30_000)
      .describe('The least time between two fetches of `jwksUrl`, in ms.'),
  })
  .refine((j) => (j.jwksUrl === undefined) !== (j.jwksFile === undefined), {
    message: 'set exactly one of jwksUrl and jwksFile',
  })
  .describe(
    'Bearer JSON Web Tokens verified against a JSON Web Key Set: set exactly one of `jwksUrl` and `jwksFile`. The principal is `jwt:<subject>`.',
  );

export const authSchema = z
  .strictObject({
    /** Shorthand for a key named `api` of scope `chat` (only: add an `inspect` or `admin` key for more). At least 16 characters. */
    apiKey: z
      .string()
      .min(16)
      .optional()
      .describe(
        'Shorthand for a key named `api` of scope `chat` only (with it alone nobody reads `/metrics` or connects servers: add an `inspect` or `admin` key); its sessions keep plain ids. At least 16 characters.',
      ),
    /** Shorthand for a key named `admin` of scope `admin`. At least 16 characters. */
    adminKey: z
      .string()
      .min(16)
      .optional()
      .describe(
        'Shorthand for a key named `admin` of scope `admin`; alone, it leaves `chat` open to every caller. While only the shorthands are set, answering approvals needs it. At least 16 characters.',
      ),
    /** Named keys and their scopes. */
    keys: z
      .array(authKeySchema)
      .default([])
      .describe("Named bearer keys with their scopes; each key's sessions are its own."),
    jwt: authJwtSchema.optional(),
  })
  .superRefine((auth, ctx) => {
    const taken = new Set([
      ...(auth.apiKey === undefined ? [] : ['api']),
      ...(auth.adminKey === undefined ? [] : ['admin']),
    ]);
    auth.keys.forEach((k, i) => {
      if (taken.has(k.name))
        ctx.addIssue({
          code: 'custom',
          path: ['keys', i, 'name'],
          message: `key name "${k.name}" is used twice (apiKey is "api", adminKey is "admin")`,
        });
      taken.add(k.name);
    });
  })
  .describe(
    'Who may call. With no key and no JWT every request may do everything (one local user); with any, requests send `Authorization: Bearer <key or token>` (WebSocket upgrades may use `?token=`).',
  );
export type AuthConfig = z.output<typeof authSchema>;

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
  /** The live state-machine inspector at /inspect/ws (also `--inspect`); off by default. */
  inspect: z
    .boolean()
    .default(false)
    .describe('Serve the live state-machine inspector (`/inspect`, `/inspect/ws`); also `--inspect`.'),
  /** Inspection frames carry prompt, reply and tool text too (also `--inspect-content`); sanitized otherwise. */
  inspectContent: z
    .boolean()
    .default(false)
    .describe(
      'Inspection frames carry prompt, reply and tool text too, still redacted (otherwise such values read `[content]`); also `--inspect-content`.',
    ),
  /** Also push the inspection stream to this external inspector server, e.g. ws://127.0.0.1:8080 (also `--inspect-relay`). */
  inspectRelay: z
    .url({ protocol: /^wss?$/ })
    .optional()
    .describe(
      'Also push the inspection stream to this external inspector server (`ws:` or `wss:`), e.g. `ws://127.0.0.1:8080`; also `--inspect-relay`.',
    ),
  /** OpenTelemetry traces over OTLP/HTTP (configured by the standard OTEL_* variables); also on when those ask for traces. */
  tracing: z
    .boolean()
    .default(false)
    .describe(
      'OpenTelemetry traces over OTLP/HTTP; the standard `OTEL_*` variables configure the exporter and can turn tracing on too.',
    ),
  /** Milliseconds a request/response endpoint waits for its answer. */
  requestTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(300_000)
    .describe(
      "How long `POST /api/message-sync`, `/mcp`'s `chat_with_agent` and a blocking A2A `SendMessage` wait for the turn's answer, in ms.",
    ),
  /**
   * Host header values accepted besides loopback names (for a reverse proxy). While bound to a
   * loopback address, a request naming any other host is refused (DNS rebinding).
   */
  allowedHosts: z
    .array(z.string())
    .default([])
    .describe(
      '`Host` header values accepted besides loopback names (behind a reverse proxy). While bound to a loopback address any other host is refused (DNS rebinding); on other binds, once set, only these and loopback names pass.',
    ),
  /**
   * Peer addresses of proxies in front of agentd (load balancers): for requests from them the client is
   * the right-most untrusted address of X-Forwarded-For (per-IP limits and logs). Empty: the peer is the client.
   */
  trustedProxies: z
    .array(z.string().refine((ip) => isIP(ip) !== 0, 'must be an IP address'))
    .default([])
    .describe(
      'IP addresses of proxies in front of agentd: for their requests the client is the right-most untrusted `X-Forwarded-For` address (per-IP limits, logs), and the A2A card follows `X-Forwarded-Host` and `X-Forwarded-Proto`. Empty: the peer is the client.',
    ),
  /** The agent's own MCP endpoint (/mcp and --mcp-transport stdio). */
  mcp: z
    .strictObject({
      /** Also offer the connected tool servers' tools through /mcp. */
      exposeTools: z
        .boolean()
        .default(false)
        .describe("Also offer the connected tool servers' tools through `/mcp`, under the names the model sees."),
      /** `POST /api/connect-server` is served (false turns it off: 403). */
      runtimeConnect: z
        .boolean()
        .default(true)
        .describe(
          'Serve the runtime connects (`POST /api/connect-server`, `POST /api/connect-a2a-agent`); `false` refuses them with 403.',
        ),
      /**
       * Executables runtime-connected stdio servers may run (a path as written, or a file name). When the
       * service is shared (an API or admin key is set, or it binds beyond loopback) an allowlist always
       * applies: this list, or when unset the commands of this file's own stdio `mcpServers`; interpreters
       * run only a package's declared bin or a script under this file's folder; wrappers (`env`, `timeout`,
       * shells, `awk`, `find`, `tar`, …) only when listed here explicitly. When not shared, it narrows
       * runtime connects only when set. The deny-list of inline code and loader env keys applies in both.
       */
      allowedCommands: z
        .array(z.string().min(1))
        .optional()
        .describe(
          "Executables runtime-connected stdio servers may run (a path as written, or a file name). On a shared service (a key set, or a non-loopback bind) an allowlist always applies: this list, else the commands of the file's own stdio `mcpServers`; wrappers (`env`, `timeout`, shells, `awk`, …) only when listed here. Default: none; on a shared service, the file's own commands.",
        ),
      /** Runtime-connected http servers may be on private, loopback and CGNAT addresses (link-local and metadata never). */
      allowPrivateNetworks: z
        .boolean()
        .default(true)
        .describe(
          'Runtime-connected http servers and A2A agents (and their OAuth endpoints) may be on private, loopback and CGNAT addresses; link-local and cloud-metadata addresses never.',
        ),
      /** When set, runtime-connected http servers may be only on these hosts (a name, or `.suffix` for its subdomains). */
      allowedHosts: z
        .array(z.string().min(1))
        .optional()
        .describe(
          'When set, runtime-connected http servers and A2A agents may be only on these hosts (a name, or `.suffix` for its subdomains).',
        ),
      /** Longest agent-to-agent chain a `chat_with_agent` call may end. */
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

/** One skill on the A2A agent card (`a2a.skills`): what a caller may ask the agent for. */
export const a2aSkillSchema = z.strictObject({
  id: z.string().min(1).max(64).describe("The skill's id."),
  name: z.string().min(1).max(128).describe('Its name for people.'),
  description: z.string().max(2000).default('').describe('What a caller may ask for under it.'),
  tags: z.array(z.string()).default([]).describe('Keywords.'),
  examples: z.array(z.string()).default([]).describe('Example requests.'),
});

/** The agent served over A2A (`/.well-known/agent-card.json`, `POST /a2a`, `/a2a/rest`; src/a2a-face). */
export const a2aSchema = z.strictObject({
  /** Serve the card, `/a2a` (JSON-RPC) and `/a2a/rest` (HTTP+JSON). */
  enabled: z
    .boolean()
    .default(true)
    .describe('Serve the card, `/a2a` (JSON-RPC) and `/a2a/rest` (HTTP+JSON); `false` serves none of them.'),
  /** The card's skills; default one chat skill. */
  skills: z
    .array(a2aSkillSchema)
    .min(1)
    .default([
      {
        id: 'chat',
        name: 'Chat',
        description: 'Talk with the agent; it may use its tools.',
        tags: ['chat'],
        examples: [],
      },
    ])
    .describe('The skills the card lists: what a caller may ask the agent for.'),
});
export type A2aConfig = z.output<typeof a2aSchema>;

/** Paths the AG-UI face may not take: the other faces' and the REST API's. */
const TAKEN_PATHS = /^\/(api|mcp|a2a|inspect)(\/|$)/;

/** The agent served over AG-UI (`POST <path>`, `GET <path>/capabilities`; src/ag-ui-face). */
export const agUiSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe('Serve the AG-UI endpoint and its capabilities (`false`: both are unknown routes).'),
  path: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'a path such as /ag-ui: segments of letters, digits, ".", "_", "~" or "-"')
    .refine((p) => !TAKEN_PATHS.test(p), 'the path belongs to another endpoint (/api, /mcp, /a2a, /inspect)')
    .default('/ag-ui')
    .describe('Where AG-UI clients run the agent (`POST`); its capabilities are at `<path>/capabilities`.'),
  clientTools: z
    .strictObject({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          "Offer a run's `tools` (tools the client runs) to the model (`false`: a run that declares any is refused).",
        ),
      principals: z
        .array(z.string().min(1))
        .optional()
        .describe(
          'Only these principals (key names, `jwt:<subject>`, `anonymous`) may declare client tools; absent: every principal that may run.',
        ),
    })
    .prefault({})
    .describe("Tools the client runs (AG-UI's `RunAgentInput.tools`): who may declare them."),
});
export type AgUiConfig = z.output<typeof agUiSchema>;

/** Sessions held in memory at most (least recently used dormant ones leave first; they reload from their log). */
const maxSessionsInMemory = z
  .number()
  .int()
  .positive()
  .default(1000)
  .describe(
    'Sessions held in memory at most: the least recently used idle one leaves first (idle ones leave after a minute anyway) and is read back from its log when used again.',
  );

export const storageSchema = z.discriminatedUnion('type', [
  z
    .strictObject({
      type: z.literal('jsonl'),
      dir: z
        .string()
        .default('./data/sessions')
        .describe(
          "The sessions' folder: written in the file, relative to the file's folder; the default, relative to the working folder.",
        ),
      maxSessionsInMemory,
    })
    .describe("One append-only JSONL file per session; each event is written and fsync'd before its frame goes out."),
  z.strictObject({ type: z.literal('memory'), maxSessionsInMemory }).describe('Nothing is kept across restarts.'),
  z
    .strictObject({
      type: z.literal('redis'),
      /** e.g. redis://127.0.0.1:6379 (credentials in the URL are redacted in logs and the export). */
      url: z
        .url({ protocol: /^rediss?$/ })
        .describe(
          '`redis://` or `rediss://`, e.g. `redis://127.0.0.1:6379` (credentials are redacted in logs and the export).',
        ),
      /** Prefix of every key, so deployments can share one Redis. */
      keyPrefix: z
        .string()
        .default('agentd:')
        .describe(
          'Prefix of every key, so deployments can share one Redis; instances with the same `url` and prefix share sessions.',
        ),
      /** How long a session stays with an instance that stopped renewing its lease (it died) before another takes it over, in ms. */
      leaseMs: z
        .number()
        .int()
        .min(500)
        .default(10_000)
        .describe(
          'How long a session stays with an instance that stopped renewing its lease (it died) before another takes it over, in ms.',
        ),
      maxSessionsInMemory,
    })
    .describe('One Redis Stream per session; every instance sharing the Redis serves every session (see Scaling out).'),
]);

const toolAction = z.enum(['allow', 'ask', 'deny']);

/** Which tool calls run, wait for a person's approval, or are refused (see src/agent/questions/tool-policy.ts). */
export const toolPolicySchema = z.strictObject({
  /** The action for a call no rule matches (runtime-connected servers included). */
  default: toolAction
    .default('allow')
    .describe(
      "What happens to a call no rule matches (runtime-connected servers included): `allow` runs it, `ask` waits for a person's approval, `deny` never runs it.",
    ),
  /** The first rule whose `server` and `tool` (names as the REST paths use them; absent = any) match decides. */
  rules: z
    .array(
      z.strictObject({
        server: serverNameSchema.optional().describe("A server's name, as in the REST paths; absent: any server."),
        tool: z.string().min(1).optional().describe("A tool's own name on its server; absent: any tool."),
        action: toolAction.describe('`allow`, `ask` or `deny`, as for `default`.'),
      }),
    )
    .default([])
    .describe('The first rule whose `server` and `tool` match a call decides.'),
  /** Milliseconds a call waits for approval before it is denied. */
  timeoutMs: z
    .number()
    .int()
    .positive()
    .default(300_000)
    .describe(
      "How long a call (or a sampling request under `sampling: ask`, or a tool server's question) waits for its answer before it is denied or declined, in ms.",
    ),
});

export const agentConfigSchema = z
  .strictObject({
    version: z.string().default('1.0.0').describe("The agent's version: on its A2A card and in the exported config."),
    name: z.string().default('agentd').describe("The agent's name: on its A2A card and its MCP card resource."),
    description: z
      .string()
      .optional()
      .describe(
        'What the agent is for: on its cards, and the `instructions` its MCP face gives clients. Default: on the A2A card, `<name>: a conversational agent with tools`.',
      ),
    systemPrompt: z
      .string()
      .default('You are a helpful assistant.')
      .describe('Sent to the model as the `system` message of every request.'),
    llm: llmSchema.describe('The model: an OpenAI-compatible endpoint, its bounds, compaction and budgets.'),
    mcpServers: z
      .record(serverNameSchema, mcpServerConfigSchema)
      .default({})
      .describe(
        "Tool servers by name. A name is the server's id in the REST paths (1 to 64 letters, digits, `_`, `.` or `-`, not only dots). All connect in parallel at start; one that fails does not stop the service.",
      ),
    /** Remote A2A agents whose skills the model may call as tools (names share one space with `mcpServers`). */
    a2aAgents: z
      .record(serverNameSchema, a2aAgentSchema)
      .default({})
      .describe(
        'Remote A2A agents whose skills the model calls as tools, by name; names share one space with `mcpServers`.',
      ),
    /** Largest tool result handed to the model, in bytes; longer results are cut with a marker. */
    toolResultMaxBytes: z
      .number()
      .int()
      .positive()
      .default(100 * 1024)
      .describe(
        'Largest tool result handed to the model, in bytes; a longer one reaches it cut, with a last line `[... truncated N bytes by agentd]` (the REST endpoints return results uncut).',
      ),
    toolPolicy: toolPolicySchema
      .prefault({})
      .describe("Which tool calls run, wait for a person's approval, or are refused."),
    storage: storageSchema.prefault({ type: 'jsonl' }).describe('Where session logs are kept.'),
    server: serverSchema
      .prefault({})
      .describe('The network service: address, CORS, limits, credentials, inspection, tracing and the MCP face.'),
    a2a: a2aSchema
      .prefault({})
      .describe('The agent served over A2A: its card at `/.well-known/agent-card.json` and `POST /a2a`.'),
    agUi: agUiSchema
      .prefault({})
      .describe(
        'The agent served over AG-UI (`POST /ag-ui`, streamed as SSE or protobuf; interrupts are its questions).',
      ),
  })
  .refine((c) => Object.keys(c.a2aAgents).every((name) => !(name in c.mcpServers)), {
    path: ['a2aAgents'],
    message: 'an A2A agent may not share its name with an entry of mcpServers (both are tool servers)',
  })
  .refine((c) => c.server.limits.store !== 'redis' || c.storage.type === 'redis', {
    path: ['server', 'limits', 'store'],
    message: 'server.limits.store "redis" needs storage.type "redis" (its URL is the one the limits use)',
  });

/** Where the rate-limit windows live: `server.limits.store`, else Redis when the sessions are there. */
export const limitsStoreOf = (config: AgentConfig): 'memory' | 'redis' =>
  config.server.limits.store ?? (config.storage.type === 'redis' ? 'redis' : 'memory');

export type AgentConfig = z.output<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
export type StdioServerConfig = z.output<typeof stdioServerSchema>;
export type HttpServerConfig = z.output<typeof httpServerSchema>;
export type LlmConfig = z.output<typeof llmSchema>;
export type LimitsConfig = z.output<typeof limitsSchema>;
export type CorsConfig = z.output<typeof corsSchema>;
export type ToolPolicyConfig = z.output<typeof toolPolicySchema>;
