/** Public face of the MCP client: the tool-server service and its bus contract. */
export { createMcpService, type McpService, type McpServiceOptions } from './service.ts';
export type * from './messages.ts';
export { TOOL_SERVER_COMMANDS } from './messages.ts';
export { MODEL_TOOL_NAME } from './naming.ts';
export { createChildRegistry, reapLeftovers, type ChildRegistry } from './spawn/child-registry.ts';
export { runtimePolicyOf, type RuntimePolicy } from './spawn/runtime-connect.ts';
