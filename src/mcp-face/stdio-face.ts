import { serveStdio as serveEras } from '@modelcontextprotocol/server/stdio';
import type { ServerFace } from './server-face.ts';

/**
 * Serves the MCP face on stdin/stdout to either era (the SDK picks it from the opening message), one
 * server per connection. It answers at once, whatever the tool servers are doing: tools appear as their
 * servers connect, each change announced with `notifications/tools/list_changed`. Nothing else may write to
 * stdout meanwhile. Resolves when stdin ends or closes.
 */
export async function serveStdio(face: ServerFace): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  let unsubscribe = () => undefined as void;
  const handle = serveEras(() => {
    const server = face.newServer(undefined, { persistent: true });
    unsubscribe = face.onToolsChanged(() => {
      if (server.transport === undefined) return; // not connected yet: its tools/list will be current
      server.sendToolListChanged().catch((err: unknown) => face.log.debug({ err }, 'tools/list_changed not sent'));
    });
    return server;
  });
  await closed;
  unsubscribe();
  await handle.close();
}
