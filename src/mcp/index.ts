/** Public face of the MCP component: the tool-server service, the bus contract, and the agent's own MCP face. */
export { createMcpService, type McpService, type McpServiceOptions } from './service.ts';
export type * from './messages.ts';
export { MODEL_TOOL_NAME } from './naming.ts';
export { createServerFace, CARD_URI, type ServerFace, type AgentCard } from './server-face.ts';
export { createHttpFace, type HttpFace, type McpExchange } from './http-face.ts';
export { serveStdio } from './stdio-face.ts';
export { INSTANCE_HEADER, HOPS_META_KEY } from './hops.ts';
