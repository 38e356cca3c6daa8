import { isIP } from 'node:net';
import { z } from 'zod';
import { serverFeatureKeys } from './server-features.ts';

/** Providers with a preset base URL and API-key environment variable (see src/llm/providers.ts). */
export const PROVIDERS = [
  'openai', 'openai-compatible', 'ollama', 'vllm', 'lmstudio', 'openrouter', 'groq',
  'together', 'deepseek', 'mistral', 'gemini', 'anthropic',
] as const;

const stringMap = z.record(z.string(), z.string());

/** The values of `mcpServers.<name>.protocolVersion`. */
export const MCP_PROTOCOL_SETTINGS = ['auto', '2025-11-25', '2026-07-28'] as const;
export type McpProtocolSetting = (typeof MCP_PROTOCOL_SETTINGS)[number];

const serverCommon = {
  description: z.string().optional(),
  /** Milliseconds that bound every request to the server. */
  timeout: z.number().int().positive().default(60_000),
  /** Largest result (one message) read from the server, in bytes; a larger one fails its call. */
  maxResultBytes: z.number().int().positive().default(10 * 1024 * 1024),
  /** The service is not ready (`/api/health/ready` answers 503) while this server is not connected. */
  required: z.boolean().default(false),
  /**
   * The MCP protocol revision spoken to the server: `auto` finds the era the server speaks (src/tools/eras.ts),
   * `2025-11-25` speaks the 2025 era only (`initialize`), `2026-07-28` the 2026-07-28 era only (`server/discover`).
   */
  protocolVersion: z
    .enum(MCP_PROTOCOL_SETTINGS)
    .default('auto')
    .describe("The MCP protocol revision spoken to the server: auto (default: the server's era, found by server/discover with a fallback to initialize), 2025-11-25 or 2026-07-28"),
  ...serverFeatureKeys,
};

export const stdioServerSchema = z.strictObject({
  type: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: stringMap.default({}),
  cwd: z.string().optional(),
  ...serverCommon,
});

/**
 * OAuth 2.1 for an `http` server (README "OAuth-protected tool servers"). `authorization_code`: an admin signs in
 * once in a browser (PKCE; the client is registered dynamically unless `clientId` is given); `client_credentials`:
 * machine to machine with `clientId` and `clientSecret`. Tokens are kept in the storage medium, never in the config.
 */
export const oauthSchema = z
  .strictObject({
    grant: z.enum(['authorization_code', 'client_credentials']).default('authorization_code'),
    /** A client registered beforehand (else dynamic client registration, RFC 7591, for `authorization_code`). */
    clientId: z.string().min(1).optional(),
    /** Its secret, e.g. `$MCP_CLIENT_SECRET` (redacted everywhere). */
    clientSecret: z.string().min(1).optional(),
    /** Scopes to ask for (default: what the server's metadata lists). */
    scopes: z.array(z.string().min(1)).optional(),
    /** Where the browser returns (default `http://127.0.0.1:<port>/api/oauth/callback`): set it behind a proxy or a public name. */
    redirectUrl: z.url({ protocol: /^https?$/ }).optional(),
  })
  .refine((o) => o.grant !== 'client_credentials' || (o.clientId !== undefined && o.clientSecret !== undefined), {
    message: 'grant client_credentials needs clientId and clientSecret',
  });
export type OAuthConfig = z.output<typeof oauthSchema>;

export const httpServerSchema = z.strictObject({
  type: z.literal('http'),
  baseUrl: z.url(),
  headers: stringMap.default({}),
  oauth: oauthSchema.optional(),
  ...serverCommon,
});

export const mcpServerConfigSchema = z.discriminatedUnion('type', [stdioServerSchema, httpServerSchema]);

/**
 * A remote A2A agent offered to the model as tools (README "A2A agents as tools"): its card is fetched from
 * `<url>/.well-known/agent-card.json` and each skill becomes a tool `<name>--<skillId>` taking `{ message }`.
 */
export const a2aAgentSchema = z.strictObject({
  /** The agent's base URL (its card is at `/.well-known/agent-card.json` under it). */
  url: z.url({ protocol: /^https?$/ }),
  /** Sent with every request (card and calls), e.g. `Authorization: Bearer $PEER_KEY` (redacted everywhere). */
  headers: stringMap.default({}),
  /** Milliseconds that bound the card fetch and each call (the whole remote task). */
  timeout: z.number().int().positive().default(120_000),
  description: z.string().optional(),
});
export type A2aAgentConfig = z.output<typeof a2aAgentSchema>;

/** A tool server's name (the keys of `mcpServers`; also its id in the REST paths). */
/** A tool server's name: also a REST path segment, so never `.` or `..` (a client would resolve them away). */
export const serverNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9_.-]{1,64}$/, 'use 1-64 letters, digits, "_", "." or "-"')
  .refine((name) => name !== '.' && name !== '..', 'a name of only dots cannot be addressed in a URL path');

export const llmSchema = z.strictObject({
  provider: z.enum(PROVIDERS).default('openai'),
  model: z.string().min(1),
  apiKey: z.string().optional(),
  /** Any OpenAI-compatible endpoint; overrides the provider preset. */
  baseURL: z.url().optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** Model steps in one turn before it ends with a clear message. */
  maxIterations: z.number().int().positive().default(20),
  /** Milliseconds one model request may take, including the whole stream. */
  timeoutMs: z.number().int().positive().default(120_000),
  /** Retries of 429 and 5xx answers. */
  maxRetries: z.number().int().min(0).max(10).default(2),
  /** Longest reply (text and tool-call arguments) one model step may stream, in characters. */
  maxReplyChars: z.number().int().positive().default(1_000_000),
  /** Milliseconds the model's stream may go without an event before the step is stopped. */
  idleTimeoutMs: z.number().int().positive().default(60_000),
  /**
   * The model's context window in tokens. Default: the provider table's figure for known models
   * (src/llm/providers.ts); unknown models have none, and are compacted only when the provider
   * answers a context overflow (whose window, when it names one, is used from then on).
   */
  contextWindow: z.number().int().min(256).optional(),
  /** Tokens kept free for the model's reply when judging whether a request fits (default: the model table's, else 4096, at most a quarter of the window). */
  maxOutputTokens: z.number().int().positive().optional(),
  /** When and how the history is compacted (README: Conversations that never break). */
  compaction: z
    .strictObject({
      /** Compact before a request whose estimated size passes this share of the context window. */
      threshold: z.number().gt(0).max(1).default(0.8),
      /** The last turns kept as they are (never summarised). */
      keepTurns: z.number().int().min(0).max(100).default(2),
      /** The system prompt of the summary request (default: the documented prompt). */
      prompt: z.string().min(1).optional(),
      /** The model that writes summaries (default `llm.model`), on the same endpoint. */
      model: z.string().min(1).optional(),
    })
    .prefault({}),
  /**
   * Token budgets (README: Budgets): a turn whose next model request would pass one is refused
   * before its first request or stopped between steps, with AGENT_ERROR `details.reason: "token_budget"`.
   */
  budget: z
    .strictObject({
      /** Tokens (prompt and completion, summaries included) a session may use in all. */
      sessionTokens: z.number().int().positive().optional(),
      /** Tokens one turn may use (all its model steps). */
      turnTokens: z.number().int().positive().optional(),
    })
    .optional(),
});

const windowLimit = (points: number) =>
  z.strictObject({
    points: z.number().int().positive().default(points),
    durationSec: z.number().int().positive().default(60),
  });

export const limitsSchema = z.strictObject({
  /** REST requests per IP per window. */
  rest: windowLimit(100).prefault({}),
  /** WebSocket messages per connection per window. */
  ws: windowLimit(50).prefault({}),
  /**
   * WebSocket messages per IP per `ws` window, across all its connections (default 10 × `ws.points`), so
   * reconnecting does not start a fresh window.
   */
  wsPerIp: z.number().int().positive().optional(),
  /** Where the request and message windows are counted: `redis` shares them across every instance (default when `storage` is Redis). */
  store: z.enum(['memory', 'redis']).optional(),
  /**
   * Sessions one principal may hold (anonymous callers: per IP); one more answers 429 until one is
   * deleted. Admin principals are not capped. See SECURITY.md, "Caps per principal".
   */
  sessionsPerPrincipal: z.number().int().positive().default(1000),
  /** Concurrent WebSocket connections per IP (counted by each instance). */
  connectionsPerIp: z.number().int().positive().default(10),
  /** Largest message body (the message endpoints, /mcp) or WebSocket frame, in bytes (10 MB image + JSON overhead). */
  maxBodyBytes: z.number().int().positive().default(14 * 1024 * 1024),
  /** Largest body of every other REST route (the control endpoints), in bytes. */
  maxJsonBytes: z.number().int().positive().default(1024 * 1024),
  /**
   * Largest session import (`POST /api/sessions/import`: an export's NDJSON), in bytes. It is read
   * whole into memory and checked before anything is stored, as a session's log is when it opens.
   */
  maxImportBytes: z.number().int().positive().default(64 * 1024 * 1024),
});

export const corsSchema = z.strictObject({
  /** Allowed origins (exact, or "*"); empty means no cross-origin access. */
  origins: z.array(z.string()).default([]),
  methods: z.array(z.string()).default(['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS']),
  headers: z.array(z.string()).default(['Content-Type', 'Authorization']),
  maxAge: z.number().int().nonnegative().default(86_400),
});

/** What a principal may do (src/auth): `chat` (messages, sessions, approvals), `inspect` (/inspect/ws, /metrics, /api/config.yaml), `admin` (everything). */
export const AUTH_SCOPES = ['chat', 'inspect', 'admin'] as const;

/** A named bearer key and the scopes it grants. */
const authKeySchema = z.strictObject({
  /** Shown in logs (never the key); unique among the keys. */
  name: z.string().min(1).max(64).regex(/^[\w.@-]+$/, 'letters, digits and _ . @ - only'),
  /** The bearer secret, e.g. `$AGENTD_CI_KEY`. At least 16 characters. */
  key: z.string().min(16),
  scopes: z.array(z.enum(AUTH_SCOPES)).min(1),
});

/** Bearer JSON Web Tokens (RS256/ES256 by default) verified against a JSON Web Key Set. */
const authJwtSchema = z
  .strictObject({
    /** The `iss` every token must carry. */
    issuer: z.string().min(1),
    /** The `aud` every token must carry. */
    audience: z.string().min(1),
    /** Where the key set is fetched (refetched on an unknown `kid`, at most once per `jwksCooldownMs`). */
    jwksUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** A JSON Web Key Set file, read at start. */
    jwksFile: z.string().min(1).optional(),
    /** The claim naming the principal (`jwt:<value>` in logs). */
    subjectClaim: z.string().min(1).default('sub'),
    /** The claim with the scopes: a space-separated string or an array; unknown names are ignored. */
    scopesClaim: z.string().min(1).default('scope'),
    algorithms: z.array(z.string().min(1)).min(1).default(['RS256', 'ES256']),
    /** The least time between two fetches of `jwksUrl`. */
    jwksCooldownMs: z.number().int().nonnegative().default(30_000),
  })
  .refine((j) => (j.jwksUrl === undefined) !== (j.jwksFile === undefined), { message: 'set exactly one of jwksUrl and jwksFile' });

export const authSchema = z
  .strictObject({
    /** Shorthand for a key named `api` of scope `chat` (every scope when it is the only credential configured). At least 16 characters. */
    apiKey: z.string().min(16).optional(),
    /** Shorthand for a key named `admin` of scope `admin`. At least 16 characters. */
    adminKey: z.string().min(16).optional(),
    /** Named keys and their scopes. */
    keys: z.array(authKeySchema).default([]),
    jwt: authJwtSchema.optional(),
  })
  .superRefine((auth, ctx) => {
    const taken = new Set([...(auth.apiKey === undefined ? [] : ['api']), ...(auth.adminKey === undefined ? [] : ['admin'])]);
    auth.keys.forEach((k, i) => {
      if (taken.has(k.name)) ctx.addIssue({ code: 'custom', path: ['keys', i, 'name'], message: `key name "${k.name}" is used twice (apiKey is "api", adminKey is "admin")` });
      taken.add(k.name);
    });
  });
export type AuthConfig = z.output<typeof authSchema>;

export const serverSchema = z.strictObject({
  host: z.string().optional(),
  port: z.number().int().min(0).max(65_535).optional(),
  cors: corsSchema.prefault({}),
  limits: limitsSchema.prefault({}),
  auth: authSchema.prefault({}),
  /** The live state-machine inspector at /inspect/ws (also `--inspect`); off by default. */
  inspect: z.boolean().default(false),
  /** Inspection frames carry prompt, reply and tool text too (also `--inspect-content`); sanitized otherwise. */
  inspectContent: z.boolean().default(false),
  /** Also push the inspection stream to this external inspector server, e.g. ws://127.0.0.1:8080 (also `--inspect-relay`). */
  inspectRelay: z.url({ protocol: /^wss?$/ }).optional(),
  /** OpenTelemetry traces over OTLP/HTTP (configured by the standard OTEL_* variables); also on when those ask for traces. */
  tracing: z.boolean().default(false),
  /** Milliseconds a request/response endpoint waits for its answer. */
  requestTimeoutMs: z.number().int().positive().default(300_000),
  /**
   * Host header values accepted besides loopback names (for a reverse proxy). While bound to a
   * loopback address, a request naming any other host is refused (DNS rebinding).
   */
  allowedHosts: z.array(z.string()).default([]),
  /**
   * Peer addresses of proxies in front of agentd (load balancers): for requests from them the client is
   * the right-most untrusted address of X-Forwarded-For (per-IP limits and logs). Empty: the peer is the client.
   */
  trustedProxies: z.array(z.string().refine((ip) => isIP(ip) !== 0, 'must be an IP address')).default([]),
  /** The agent's own MCP endpoint (/mcp and --mcp-transport stdio). */
  mcp: z
    .strictObject({
      /** Also offer the connected tool servers' tools through /mcp. */
      exposeTools: z.boolean().default(false),
      /** `POST /api/connect-server` is served (false turns it off: 403). */
      runtimeConnect: z.boolean().default(true),
      /**
       * Executables runtime-connected stdio servers may run (a path as written, or a file name). When the
       * service is shared (an API or admin key is set, or it binds beyond loopback) an allowlist always
       * applies: this list, or when unset the commands of this file's own stdio `mcpServers`; interpreters
       * run only a package's declared bin or a script under this file's folder; wrappers (`env`, `timeout`,
       * shells, `awk`, `find`, `tar`, …) only when listed here explicitly. When not shared, it narrows
       * runtime connects only when set. The deny-list of inline code and loader env keys applies in both.
       */
      allowedCommands: z.array(z.string().min(1)).optional(),
      /** Runtime-connected http servers may be on private, loopback and CGNAT addresses (link-local and metadata never). */
      allowPrivateNetworks: z.boolean().default(true),
      /** When set, runtime-connected http servers may be only on these hosts (a name, or `.suffix` for its subdomains). */
      allowedHosts: z.array(z.string().min(1)).optional(),
      /** Longest agent-to-agent chain a `chat_with_agent` call may end. */
      maxHops: z.number().int().min(0).max(32).default(3),
    })
    .prefault({}),
});

/** One skill on the A2A agent card (`a2a.skills`): what a caller may ask the agent for. */
export const a2aSkillSchema = z.strictObject({
  id: z.string().min(1).max(64),
  name: z.string().min(1).max(128),
  description: z.string().max(2000).default(''),
  tags: z.array(z.string()).default([]),
  examples: z.array(z.string()).default([]),
});

/** The agent served over A2A (`/.well-known/agent-card.json`, `POST /a2a`; src/a2a-face). */
export const a2aSchema = z.strictObject({
  /** Serve the card and `/a2a` (false: both answer 404). */
  enabled: z.boolean().default(true),
  /** The card's skills; default one chat skill. */
  skills: z.array(a2aSkillSchema).min(1).default([{ id: 'chat', name: 'Chat', description: 'Talk with the agent; it may use its tools.', tags: ['chat'], examples: [] }]),
});
export type A2aConfig = z.output<typeof a2aSchema>;

/** Sessions held in memory at most (least recently used dormant ones leave first; they reload from their log). */
const maxSessionsInMemory = z.number().int().positive().default(1000);

export const storageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('jsonl'), dir: z.string().default('./data/sessions'), maxSessionsInMemory }),
  z.strictObject({ type: z.literal('memory'), maxSessionsInMemory }),
  z.strictObject({
    type: z.literal('redis'),
    /** e.g. redis://127.0.0.1:6379 (credentials in the URL are redacted in logs and the export). */
    url: z.url({ protocol: /^rediss?$/ }),
    /** Prefix of every key, so deployments can share one Redis. */
    keyPrefix: z.string().default('agentd:'),
    /** How long a session stays with an instance that stopped renewing its lease (it died) before another takes it over, in ms. */
    leaseMs: z.number().int().min(500).default(10_000),
    maxSessionsInMemory,
  }),
]);

const toolAction = z.enum(['allow', 'ask', 'deny']);

/** Which tool calls run, wait for a person's approval, or are refused (see src/agent/tool-policy.ts). */
export const toolPolicySchema = z.strictObject({
  /** The action for a call no rule matches (runtime-connected servers included). */
  default: toolAction.default('allow'),
  /** The first rule whose `server` and `tool` (names as the REST paths use them; absent = any) match decides. */
  rules: z.array(z.strictObject({ server: serverNameSchema.optional(), tool: z.string().min(1).optional(), action: toolAction })).default([]),
  /** Milliseconds a call waits for approval before it is denied. */
  timeoutMs: z.number().int().positive().default(300_000),
});

export const agentConfigSchema = z.strictObject({
  version: z.string().default('1.0.0'),
  name: z.string().default('agentd'),
  description: z.string().optional(),
  systemPrompt: z.string().default('You are a helpful assistant.'),
  llm: llmSchema,
  mcpServers: z.record(serverNameSchema, mcpServerConfigSchema).default({}),
  /** Remote A2A agents whose skills the model may call as tools (names share one space with `mcpServers`). */
  a2aAgents: z.record(serverNameSchema, a2aAgentSchema).default({}),
  /** Largest tool result handed to the model, in bytes; longer results are cut with a marker. */
  toolResultMaxBytes: z.number().int().positive().default(100 * 1024),
  toolPolicy: toolPolicySchema.prefault({}),
  storage: storageSchema.prefault({ type: 'jsonl' }),
  server: serverSchema.prefault({}),
  a2a: a2aSchema.prefault({}),
}).refine((c) => Object.keys(c.a2aAgents).every((name) => !(name in c.mcpServers)), {
  path: ['a2aAgents'],
  message: 'an A2A agent may not share its name with an entry of mcpServers (both are tool servers)',
}).refine((c) => c.server.limits.store !== 'redis' || c.storage.type === 'redis', {
  path: ['server', 'limits', 'store'],
  message: 'server.limits.store "redis" needs storage.type "redis" (its URL is the one the limits use)',
});

/** Where the rate-limit windows live: `server.limits.store`, else Redis when the sessions are there. */
export const limitsStoreOf = (config: AgentConfig): 'memory' | 'redis' => config.server.limits.store ?? (config.storage.type === 'redis' ? 'redis' : 'memory');

export type AgentConfig = z.output<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
export type StdioServerConfig = z.output<typeof stdioServerSchema>;
export type HttpServerConfig = z.output<typeof httpServerSchema>;
export type LlmConfig = z.output<typeof llmSchema>;
export type LimitsConfig = z.output<typeof limitsSchema>;
export type CorsConfig = z.output<typeof corsSchema>;
export type ToolPolicyConfig = z.output<typeof toolPolicySchema>;
export type Provider = (typeof PROVIDERS)[number];
