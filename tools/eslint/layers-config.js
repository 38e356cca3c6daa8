// @ts-check
/**
 * The layer table of agentd (ARCHITECTURE.md §2 and §6), enforced by `agentd/layers`
 * (tools/eslint/layers.js). Each component lists the components it may import; the graph is
 * acyclic by construction (the rule refuses a cycle). Lower layers first.
 */
const LEAVES = ['clock', 'backoff', 'jsonDepth', 'sessionId', 'packageInfo', 'errors', 'log'];

/** @type {{ components: Record<string, { path: string, uses?: string[] }>, externals: Record<string, string[]> }} */
export const LAYERS = {
  components: {
    clock: { path: 'src/clock.ts' },
    backoff: { path: 'src/backoff.ts' },
    jsonDepth: { path: 'src/json-depth.ts' },
    sessionId: { path: 'src/session-id.ts' },
    packageInfo: { path: 'src/package-info.ts' },
    errors: { path: 'src/errors' },
    log: { path: 'src/log' },
    config: { path: 'src/config', uses: [...LEAVES] },
    inspect: { path: 'src/inspect', uses: [...LEAVES] },
    bus: { path: 'src/bus', uses: [...LEAVES] },
    redis: { path: 'src/redis', uses: [...LEAVES] },
    cluster: { path: 'src/cluster', uses: [...LEAVES, 'bus', 'redis'] },
    store: { path: 'src/store', uses: [...LEAVES, 'config', 'redis'] },
    llm: { path: 'src/llm', uses: [...LEAVES, 'config'] },
    machines: { path: 'machines', uses: [...LEAVES, 'llm'] },
    mcpClient: { path: 'src/mcp/client', uses: [...LEAVES, 'config', 'bus', 'llm', 'machines', 'inspect'] },
    agent: { path: 'src/agent', uses: [...LEAVES, 'config', 'bus', 'llm', 'store', 'machines', 'mcpClient', 'inspect'] },
    mcpServer: { path: 'src/mcp/server', uses: [...LEAVES, 'config', 'bus', 'agent', 'mcpClient'] },
    metrics: { path: 'src/metrics', uses: [...LEAVES, 'bus', 'agent', 'mcpClient'] },
    tracing: { path: 'src/tracing', uses: [...LEAVES, 'bus', 'llm', 'agent'] },
    // The HTTP/WebSocket engines (uWebSockets.js, node:http + ws) behind one narrow interface; they import nothing of ours.
    httpEngine: { path: 'src/http/engine' },
    http: { path: 'src/http', uses: [...LEAVES, 'config', 'bus', 'llm', 'agent', 'mcpClient', 'mcpServer', 'metrics', 'inspect', 'redis', 'httpEngine'] },
    app: { path: 'src/app.ts', uses: [...LEAVES, 'config', 'bus', 'llm', 'store', 'machines', 'mcpClient', 'agent', 'mcpServer', 'metrics', 'tracing', 'inspect', 'http', 'httpEngine', 'redis', 'cluster'] },
    cli: { path: 'src/cli', uses: [...LEAVES, 'config', 'llm', 'mcpServer', 'http', 'app'] },
    entry: { path: 'src/cli.ts', uses: [...LEAVES, 'cli'] },
  },
  externals: {
    'uWebSockets.js': ['httpEngine'],
    ws: ['httpEngine'],
    openai: ['llm'],
    '@modelcontextprotocol/sdk/client': ['mcpClient'],
    '@modelcontextprotocol/sdk/server': ['mcpServer'],
  },
};
