/** Public face of the MCP component: the service and the bus contract. */
export { createMcpService, type McpService, type McpServiceOptions } from './service.ts';
export type * from './messages.ts';
export { MODEL_TOOL_NAME } from './naming.ts';
