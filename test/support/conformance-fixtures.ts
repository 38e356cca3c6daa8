/**
 * The MCP conformance suite's fixture tools mapped onto agentd's own (issue 69 item 9): a loopback HTTP proxy in
 * front of `/mcp` that renames a `tools/call` of a fixture agentd can serve to the agentd tool that behaves as the
 * fixture is specified, and rewrites its arguments (the `Mcp-Name` header with it). Everything else, and every
 * answer, passes through unchanged (the `Host` header included, for the DNS-rebinding scenario). Fixtures with no
 * counterpart stay unknown, and their checks stay in the expected failures, with reasons.
 *
 * | fixture | specified as | agentd |
 * |---|---|---|
 * | `slow_compute {seconds, label}` | a task that takes `seconds`, cancellable | `chat_with_agent` with the simulator's `[[ttft:MS]]` |
 * | `failing_job {}` | a task ending in a tool error (`completed`, `isError`) | `chat_with_agent` whose model call fails (400) |
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Args = Record<string, unknown>;
/** The fixture tools agentd serves, each as the agentd tool and arguments a call of it becomes. */
export const FIXTURE_TOOLS: Record<string, (args: Args) => { name: string; arguments: Args }> = {
  slow_compute: (args) => {
    const seconds = typeof args.seconds === 'number' ? args.seconds : 0;
    const label = typeof args.label === 'string' ? args.label : 'slow_compute';
    return { name: 'chat_with_agent', arguments: { message: `${label} [[ttft:${Math.round(seconds * 1000)}]]` } };
  },
  failing_job: () => ({ name: 'chat_with_agent', arguments: { message: '[[error:400 message=failing_job]]' } }),
};

/** One JSON-RPC message with its fixture call mapped; anything else as it was. */
function mapMessage(message: unknown): { message: unknown; from?: string; to?: string } {
  const call = message as { method?: string; params?: { name?: unknown; arguments?: Args } } | null;
  if (call?.method !== 'tools/call' || typeof call.params?.name !== 'string') return { message };
  const map = FIXTURE_TOOLS[call.params.name];
  if (!map) return { message };
  const mapped = map(call.params.arguments ?? {});
  return { message: { ...call, params: { ...call.params, ...mapped } }, from: call.params.name, to: mapped.name };
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of req) pieces.push(piece as Buffer);
  return Buffer.concat(pieces);
}

export interface FixtureProxy {
  /** The proxy's `/mcp`. */
  url: string;
  close(): Promise<void>;
}

/** Starts the mapping proxy in front of `target` (`http://127.0.0.1:<port>`, agentd's origin). */
export async function startFixtureProxy(target: string): Promise<FixtureProxy> {
  const origin = new URL(target);
  const server: Server = createServer((req, res) => {
    void bodyOf(req).then((raw) => {
      const headers = { ...req.headers };
      let body = raw;
      if (raw.length > 0 && (req.headers['content-type'] ?? '').includes('json')) {
        try {
          const mapped = mapMessage(JSON.parse(raw.toString('utf8')));
          if (mapped.from) {
            body = Buffer.from(JSON.stringify(mapped.message));
            if (headers['mcp-name'] === mapped.from) headers['mcp-name'] = mapped.to;
          }
        } catch {
          // not JSON: the suite's malformed-body probes go through as they are
        }
      }
      headers['content-length'] = String(body.length);
      const upstream = request(
        { host: origin.hostname, port: origin.port, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
