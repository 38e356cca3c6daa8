import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ServerFace } from './server-face.ts';

/**
 * Serves the agent's MCP face on stdin/stdout (for desktop MCP clients that launch agentd as a
 * command). Nothing else may write to stdout meanwhile. Resolves when stdin closes.
 */
export async function serveStdio(face: ServerFace): Promise<void> {
  const server = face.newServer();
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
