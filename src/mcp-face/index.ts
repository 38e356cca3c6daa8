/** Public face of the agent as an MCP server: the face, and its HTTP and stdio transports. */
export { createServerFace, type ServerFace } from './server-face.ts';
export { createHttpFace, type HttpFace } from './http-face.ts';
export { serveStdio } from './stdio-face.ts';
export { mcpMount, MCP_PATH } from './endpoint.ts';
