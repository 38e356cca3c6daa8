// @ts-check
/**
 * The layer table of agentd (ARCHITECTURE.md §2 and §6), enforced by `agentd/layers`
 * (tools/eslint/layers.js). Each component lists the components it may import; the graph is
 * acyclic by construction (the rule refuses a cycle). Lower layers first.
 */
const LEAVES = ['clock', 'backoff', 'jsonDepth', 'sessionId', 'version', 'errors', 'log'];

/** @type {{ components: Record<string, { path: string, uses?: string[] }>, externals: Record<string, string[]> }} */
export const LAYERS = {
  components: {
    clock: { path: 'src/clock.ts' },
    backoff: { path: 'src/backoff.ts' },
    jsonDepth: { path: 'src/json-depth.ts' },
    sessionId: { path: 'src/session-id.ts' },
    version: { path: 'src/version.ts' },
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
    http: { path: 'src/http', uses: [...LEAVES, 'config', 'bus', 'llm', 'agent', 'mcpClient', 'mcpServer', 'metrics', 'inspect', 'redis'] },
    app: { path: 'src/app.ts', uses: [...LEAVES, 'config', 'bus', 'llm', 'store', 'machines', 'mcpClient', 'agent', 'mcpServer', 'metrics', 'tracing', 'inspect', 'http', 'redis', 'cluster'] },
    cliArgs: { path: 'src/cli-args.ts', uses: [...LEAVES] },
    cli: { path: 'src/cli.ts', uses: [...LEAVES, 'config', 'cliArgs', 'mcpServer', 'http', 'app'] },
  },
  externals: {
    'uWebSockets.js': ['http'],
    openai: ['llm'],
    '@modelcontextprotocol/sdk/client': ['mcpClient'],
    '@modelcontextprotocol/sdk/server': ['mcpServer'],
  },
};
