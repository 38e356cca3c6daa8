/**
 * The chaos run's receivers: small loopback HTTP servers that record every request they get (headers and body) to an
 * NDJSON log in the run's folder and in memory. The webhook receiver answers 204, or 503 to a share of requests
 * (`failRate`, drawn from the run's PRNG) so deliveries are retried; the A2A push receiver answers 204.
 */
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { lifecycle } from './cleanup.ts';
import type { Prng } from './prng.ts';

export interface Hit {
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  hits: Hit[];
  close(): Promise<void>;
}

export async function startReceiver(logFile: string, prng: Prng, failRate: number): Promise<Receiver> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = prng.chance(failRate) ? 503 : 204;
      const hit = {
        at: Date.now(),
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        status,
      };
      hits.push(hit);
      if (!lifecycle.ended) appendFileSync(logFile, `${JSON.stringify(hit)}\n`);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The task a push names and its state: v1.0 `{task: {id, status: {state}}}`, or a bare v0.3 task. */
export function pushedTask(body: string): { taskId: string; state: string } | undefined {
  try {
    const parsed = JSON.parse(body) as { task?: Task } & Task;
    const task = parsed.task ?? parsed;
    if (typeof task.id !== 'string') return undefined;
    const state = task.status?.state;
    return { taskId: task.id, state: typeof state === 'string' || typeof state === 'number' ? String(state) : '' };
  } catch {
    return undefined;
  }
}

interface Task {
  id?: unknown;
  status?: { state?: unknown };
}
