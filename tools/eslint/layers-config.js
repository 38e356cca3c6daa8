// @ts-check
/**
 * The layer table of agentd (ARCHITECTURE.md §2 and §6), enforced by `agentd/layers`
 * (tools/eslint/layers.js). Each component lists the components it may import; the graph is
 * acyclic by construction (the rule refuses a cycle). Lower layers first.
 */
const LEAVES = [
  'clock',
  'backoff',
  'madeOnce',
  'jsonDepth',
  'sessionId',
  'packageInfo',
  'errors',
  'log',
  'egress',
  'procs',
];
/** What the agent's session may import; the session service (the `agent` row) too, and the session and follow rows. */
const SESSION_USES = [
  'config',
  'bus',
  'llm',
  'store',
  'conversation',
  'machines',
  'tools',
  'toolsMessages',
  'inspect',
  'agentFrames',
  'agentTransientFrames',
  'agentQuestionFrames',
  'agentMessages',
  'agentCompaction',
  'agentQuestions',
  'agentReact',
];
/** What a face may import: the agent's contract, and the front end's endpoint kit (`http`, its engine's types). */
const FACE_USES = [...LEAVES, 'config', 'auth', 'bus', 'conversation', 'agent', 'http', 'httpEngine'];
/** What the parts of createApp (src/app/) may import; createApp (src/app.ts) too, and the rest it wires. */
const APP_PARTS_USES = [
  'config',
  'memory',
  'spend',
  'webhooks',
  'webhooksMessages',
  'bus',
  'llm',
  'tools',
  'agent',
  'mcpFace',
  'a2aFace',
  'a2aPush',
  'agUiFace',
  'metrics',
  'tracing',
  'inspect',
  'http',
  'httpEngine',
  'schedules',
  'schedulesFeature',
  'memoryFeature',
  'webhooksFeature',
  'spendFeature',
  'a2aPushFeature',
];

/** @type {{ components: Record<string, { path: string, uses?: string[] }>, externals: Record<string, string[]> }} */
export const LAYERS = {
  components: {
    clock: { path: 'src/clock.ts' },
    backoff: { path: 'src/backoff.ts' },
    madeOnce: { path: 'src/made-once.ts' },
    jsonDepth: { path: 'src/json-depth.ts' },
    // Session ids and keys: `sessionKey` refuses a bad id through the error table.
    sessionId: { path: 'src/session-id.ts', uses: ['errors'] },
    packageInfo: { path: 'src/package-info.ts' },
    // Egress: which URLs agentd may reach for a runtime server, a webhook, a push config (url-policy.ts), the forward
    // proxy a request goes through (proxy.ts), and the policy the agent file sets (policy.ts).
    egress: { path: 'src/egress', uses: ['errors'] },
    // The system's processes (/proc): which runs, since when, in which boot.
    procs: { path: 'src/procs.ts' },
    errors: { path: 'src/errors' },
    log: { path: 'src/log' },
    config: { path: 'src/config', uses: [...LEAVES] },
    inspect: { path: 'src/inspect', uses: [...LEAVES] },
    bus: { path: 'src/bus', uses: [...LEAVES] },
    redis: { path: 'src/redis', uses: [...LEAVES] },
    cluster: { path: 'src/cluster', uses: [...LEAVES, 'bus', 'redis'] },
    // Principals and scopes: who a request acts for, from its bearer credential (keys, JWT).
    auth: { path: 'src/auth', uses: [...LEAVES, 'config'] },
    store: { path: 'src/store', uses: [...LEAVES, 'config', 'redis'] },
    // Memory per principal: an append-only log per owner on the record store, searched and folded for the model's tools.
    memory: { path: 'src/memory', uses: [...LEAVES, 'config', 'store'] },
    // The conversation's domain: session events, tool shapes, pure turn steps, the records the outside sees.
    conversation: { path: 'src/conversation', uses: [...LEAVES] },
    llm: { path: 'src/llm', uses: [...LEAVES, 'config', 'conversation'] },
    machines: { path: 'machines', uses: [...LEAVES, 'conversation'] },
    // Who may start which process, and which URLs a runtime server may reach: the spawn and URL policy, process groups.
    toolsSpawn: { path: 'src/tools/spawn', uses: [...LEAVES, 'config'] },
    // What a tool server asks during a call (elicitation, sampling) and who answers: the MCP client routes it, the
    // agent's questions answer it; it imports neither.
    toolsAsks: { path: 'src/tools/server-asks.ts', uses: [...LEAVES, 'conversation'] },
    // The tools' bus contract (mcp.* commands and events, the records): below every sub-folder of the tools.
    toolsMessages: { path: 'src/tools/messages.ts', uses: [...LEAVES, 'config', 'conversation', 'toolsAsks'] },
    // OAuth for tool servers: sign-in, tokens (in the store's secret store, src/store/secret-store.ts), policy.
    toolsOauth: { path: 'src/tools/oauth', uses: [...LEAVES, 'config', 'store', 'toolsSpawn'] },
    // The MCP client: one connection for both protocol eras, its transports, what a server asks, resources, prompts.
    toolsMcp: {
      path: 'src/tools/mcp',
      uses: [
        ...LEAVES,
        'config',
        'bus',
        'store',
        'conversation',
        'machines',
        'inspect',
        'toolsSpawn',
        'toolsOauth',
        'toolsAsks',
        'toolsMessages',
      ],
    },
    // Remote A2A agents as tool servers, over the MCP client's connection shape.
    toolsA2a: { path: 'src/tools/a2a', uses: [...LEAVES, 'config', 'conversation', 'toolsSpawn', 'toolsMcp'] },
    // The agent's tool servers: the service (its bus handlers, the server pool, tool calls, the catalogue and tool
    // naming, sign-ins) and the files that join its sub-folders (server-oauth.ts: the MCP client with OAuth).
    tools: {
      path: 'src/tools',
      uses: [
        ...LEAVES,
        'config',
        'store',
        'conversation',
        'machines',
        'toolsSpawn',
        'toolsAsks',
        'toolsMessages',
        'toolsOauth',
        'toolsMcp',
        'toolsA2a',
      ],
    },
    // The agent's frames (toFrame of a stored event) and its bus contract: below every sub-folder of the agent.
    agentFrames: {
      path: 'src/agent/frames.ts',
      uses: [...LEAVES, 'conversation', 'llm', 'store', 'agentQuestionFrames'],
    },
    // The frames no fact stands behind (a chunk, thinking, what could not be stored): made by the session.
    agentTransientFrames: { path: 'src/agent/transient-frames.ts', uses: [...LEAVES, 'agentFrames'] },
    // The frames of questions (the stored pair on the wire, and read back by faces): below the agent's frames.
    agentQuestionFrames: { path: 'src/agent/question-frames.ts', uses: [...LEAVES, 'conversation'] },
    agentMessages: { path: 'src/agent/messages.ts', uses: [...LEAVES, 'conversation', 'llm', 'store', 'agentFrames'] },
    // Context meter, budgets and what a compaction does (pure); the session runs them (session/compactor.ts).
    agentCompaction: { path: 'src/agent/compaction', uses: [...LEAVES, 'config', 'conversation', 'llm'] },
    // One kind of question for a person, from the side of the call that asks it; the tool policy.
    agentQuestions: {
      path: 'src/agent/questions',
      uses: [...LEAVES, 'config', 'conversation', 'llm', 'toolsMessages', 'agentCompaction'],
    },
    // Reactions to stored facts, from the log with checkpoints (webhooks and A2A push are reactions).
    agentReact: { path: 'src/agent/react', uses: [...LEAVES, 'store', 'agentFrames'] },
    // The session: decider, actor, outbox, history projection, quotas, transfer.
    agentSession: { path: 'src/agent/session', uses: [...LEAVES, ...SESSION_USES] },
    // Following a turn (followTurn, the turn index, the turn waiter).
    agentFollow: {
      path: 'src/agent/follow',
      uses: [...LEAVES, 'bus', 'conversation', 'store', 'agentFrames', 'agentQuestionFrames', 'agentMessages'],
    },
    // The session service: its bus handlers, the sessions in memory, the public face (index.ts).
    agent: { path: 'src/agent', uses: [...LEAVES, ...SESSION_USES, 'agentSession', 'agentFollow'] },
    // The webhooks' bus contract and records (what the REST routes execute and show).
    webhooksMessages: { path: 'src/webhooks/messages.ts', uses: [...LEAVES, 'config'] },
    // Webhooks: finished work announced from the session's stored facts through a durable outbox (docs/webhooks.md).
    webhooks: {
      path: 'src/webhooks',
      uses: [...LEAVES, 'config', 'bus', 'store', 'redis', 'agent', 'toolsSpawn', 'webhooksMessages'],
    },
    // Spend in money: the ledger of priced steps (a reaction), the budgets checked before each model step.
    spend: {
      path: 'src/spend',
      uses: [...LEAVES, 'config', 'store', 'conversation', 'memory', 'schedules', 'agentFrames', 'agentReact'],
    },
    metrics: { path: 'src/metrics', uses: [...LEAVES, 'bus', 'agent', 'tools'] },
    // Schedules: turns the agent starts on a cron expression or an interval, claimed once per tick (its own store).
    schedules: { path: 'src/schedules', uses: [...LEAVES, 'config', 'bus', 'agent', 'redis', 'store'] },
    tracing: { path: 'src/tracing', uses: [...LEAVES, 'bus', 'llm', 'agent'] },
    // The HTTP/WebSocket port the front end is written against (types.ts) and its adapters (uWebSockets.js, node:http + ws, in process); they import nothing of ours.
    httpEngine: { path: 'src/http/engine', uses: ['http1Server'] },
    // agentd's own HTTP/1.1 server wire (heads, bodies, connections), package-shaped: it imports nothing of ours.
    http1Server: { path: 'src/http/engine/http1-server' },
    http: {
      path: 'src/http',
      uses: [
        ...LEAVES,
        'config',
        'auth',
        'bus',
        'llm',
        'conversation',
        'agent',
        'tools',
        'toolsMessages',
        'metrics',
        'inspect',
        'redis',
        'httpEngine',
      ],
    },
    // The features as the service hosts them (src/http/feature-mount.ts): each one built from the agent file and the
    // ports createApp hands it (`feature/index.ts`), its REST routes, lifecycle and reactions (its mount), above the
    // front end's kit; `http` imports none of them.
    schedulesFeature: {
      path: 'src/schedules/feature',
      uses: [...LEAVES, 'config', 'auth', 'bus', 'store', 'http', 'schedules'],
    },
    // Memory's feature builds the agent's MemoryPort (the agent imports nothing of src/memory) and its embeddings.
    memoryFeature: {
      path: 'src/memory/feature',
      uses: [...LEAVES, 'config', 'auth', 'bus', 'llm', 'store', 'agent', 'http', 'memory'],
    },
    webhooksFeature: {
      path: 'src/webhooks/feature',
      uses: [...LEAVES, 'config', 'bus', 'store', 'http', 'webhooks', 'webhooksMessages'],
    },
    // The spend ledger and the budget gate (the agent's SpendPort), and the usage report (GET /api/usage) over it.
    spendFeature: {
      path: 'src/spend/feature',
      uses: [...LEAVES, 'config', 'auth', 'store', 'agent', 'http', 'memory', 'spend'],
    },
    // The faces: each mounts on the front end through the endpoint kit of `http` (src/http/face-endpoint.ts), which
    // imports no face. The agent served over MCP (/mcp, --mode mcp).
    mcpFace: { path: 'src/mcp-face', uses: [...FACE_USES, 'toolsMessages'] },
    // The agent served over A2A (agent card, /a2a): its own JSON-RPC over the agent's bus and event log.
    a2aFace: { path: 'src/a2a-face', uses: FACE_USES },
    // A2A push notifications, with the A2A face (src/a2a-face/push): tasks' configs in the secret store (their changes heard across instances on Redis),
    // notifications as deliveries of the webhooks' outbox.
    a2aPush: {
      path: 'src/a2a-face/push',
      uses: [...LEAVES, 'config', 'bus', 'store', 'redis', 'auth', 'agent', 'toolsSpawn', 'webhooks', 'a2aFace'],
    },
    // A2A push as a feature: built beside the webhooks it needs (their outbox and dispatcher), its reaction in its mount.
    a2aPushFeature: { path: 'src/a2a-face/push/feature', uses: [...LEAVES, 'http', 'webhooks', 'a2aPush'] },
    // The agent served over AG-UI (/ag-ui): runs are turns, interrupts are questions.
    agUiFace: { path: 'src/ag-ui-face', uses: [...FACE_USES, 'toolsMessages'] },
    // What createApp is given and returns (types.ts), its metrics and traces (observability.ts), its cluster (cluster.ts).
    appParts: { path: 'src/app', uses: [...LEAVES, ...APP_PARTS_USES, 'store', 'cluster'] },
    app: {
      path: 'src/app.ts',
      uses: [...LEAVES, ...APP_PARTS_USES, 'store', 'conversation', 'machines', 'redis', 'cluster', 'appParts'],
    },
    // The typed client the package exports (agentd-server/client): it runs in Node and browsers, so it imports the
    // server's modules for their types only (test/unit/client-imports.test.ts holds it to `import type`).
    client: {
      path: 'src/client',
      uses: [
        'config',
        'conversation',
        'agentFrames',
        'toolsMessages',
        'http',
        'schedulesFeature',
        'memoryFeature',
        'webhooksFeature',
        'spendFeature',
      ],
    },
    cli: { path: 'src/cli', uses: [...LEAVES, 'config', 'llm', 'mcpFace', 'http', 'app'] },
    entry: { path: 'src/cli.ts', uses: [...LEAVES, 'cli'] },
  },
  externals: {
    'uWebSockets.js': ['httpEngine'],
    ws: ['httpEngine'],
    openai: ['llm'],
    '@anthropic-ai/sdk': ['llm'],
    '@modelcontextprotocol/server': ['mcpFace'],
    '@modelcontextprotocol/client': ['tools', 'toolsOauth', 'toolsMcp', 'toolsA2a'],
    jose: ['auth'],
    '@ag-ui/core': ['agUiFace'],
    '@ag-ui/proto': ['agUiFace'],
  },
};
