/**
 * The chaos run's model: the project's simulator (tools/simulator, answers scripted by the directives in each
 * message), behind a small loopback proxy that is the "slow model" fault: while `delayMs` is set, every model request
 * that arrives waits that long before it reaches the simulator (a provider slow to answer its first byte). It counts
 * the requests it forwarded.
 */
import { createServer, request, type Server } from 'node:http';
import { startSimulator } from '../simulator/index.ts';

export interface SlowModel {
  /** The base URL agentd is given (`…/v1`). */
  url: string;
  /** Delay of each model request arriving from now on, in ms (0: none). */
  delayMs: number;
  requests: number;
  close(): Promise<void>;
}

export async function startSlowModel(): Promise<SlowModel> {
  const sim = await startSimulator({ port: 0, record: false });
  const target = new URL(sim.url);
  const model: SlowModel = {
    url: '',
    delayMs: 0,
    requests: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sim.close();
    },
  };
  const server: Server = createServer((req, res) => {
    model.requests++;
    const forward = () => {
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    };
    if (model.delayMs > 0) setTimeout(forward, model.delayMs);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  return model;
}
