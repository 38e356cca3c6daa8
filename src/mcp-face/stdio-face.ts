import { serveStdio as serveEras } from '@modelcontextprotocol/server/stdio';
import type { ServerFace } from './server-face.ts';

/**
 * Serves the agent's MCP face on stdin/stdout (for desktop MCP clients that launch agentd as a
 * command), to clients of either era: the SDK picks the era from the connection's opening message
 * (`initialize`: 2025-era, pinned for the connection; a 2026-07-28 request or `server/discover`:
 * modern) and builds one server for it from the face; that server lives as long as the connection,
 * so it may ask the client to approve tool calls through elicitation. Nothing else may write to stdout meanwhile.
 * Resolves when stdin closes.
 */
export async function serveStdio(face: ServerFace): Promise<void> {
  const closed = new Promise<void>((resolve) => process.stdin.once('end', () => resolve()));
  const handle = serveEras(() => face.newServer(undefined, { persistent: true }));
  await closed;
  await handle.close();
}
