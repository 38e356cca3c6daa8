import { serveStdio as serveEras } from '@modelcontextprotocol/server/stdio';
import type { ServerFace } from './server-face.ts';

/**
 * Serves the MCP face on stdin/stdout to either era (the SDK picks it from the opening message), one
 * server per connection. Nothing else may write to stdout meanwhile. Resolves when stdin closes.
 */
export async function serveStdio(face: ServerFace): Promise<void> {
  const closed = new Promise<void>((resolve) => process.stdin.once('end', () => resolve()));
  const handle = serveEras(() => face.newServer(undefined, { persistent: true }));
  await closed;
  await handle.close();
}
