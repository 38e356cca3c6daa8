/**
 * `agentd --workers N`: N processes serve one port and share sessions through Redis; a worker that
 * dies is replaced; SIGTERM drains them all. Without the Redis store, or without Redis, it refuses
 * to start.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { runAgentd, writeAgentFile } from '../support/agentd-process.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { until } from '../support/wait.ts';
import { connectWs } from '../support/ws-client.ts';

const enabled = hasRedisServer();

/** agentd with `config`, on a free port, with extra flags. */
const agentd = async (config: object, args: string[]) =>
  runAgentd(['--agent', await writeAgentFile(config), '--web-port', '0', ...args]);

/** The waits below start processes: the deadline is a loaded machine's. */
const STARTING = { timeout: 60_000 };

/** Pids of the processes whose parent is `pid`. */
const childrenOf = (pid: number): number[] => {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
};

// Starts a supervisor and its workers (three agentd processes, one restarted): room for a loaded machine.
describe.skipIf(!enabled)('agentd --workers', { timeout: 120_000 }, () => {
  let redis: RedisServer;
  let sim: Simulator;
  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator();
  });
  afterAll(async () => {
    await sim.close();
    await redis.stop();
  });
  const llm = () => ({ provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k' });

  it('refuses without the Redis store, and when Redis cannot be reached, exiting 1', async () => {
    const memory = await agentd({ llm: llm(), storage: { type: 'memory' } }, ['--workers', '2']);
    expect(await memory.exited).toBe(1);
    expect(memory.err()).toMatch(/--workers needs storage\.type redis or postgres/);
    const unreachable = await agentd({ llm: llm(), storage: { type: 'redis', url: 'redis://127.0.0.1:1' } }, [
      '--workers',
      '2',
    ]);
    expect(await unreachable.exited).toBe(1);
    expect(unreachable.err()).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  });

  it('serves one port from two workers, replaces one killed, and drains both on SIGTERM', async () => {
    const storage = { type: 'redis', url: redis.url, keyPrefix: `workers${randomUUID()}:`, leaseMs: 1000 };
    const p = await agentd({ llm: llm(), storage, server: { limits: { rest: { points: 10_000 } } } }, [
      '--workers',
      '2',
    ]);
    try {
      const ready = () =>
        p
          .out()
          .split('\n')
          .filter((l) => l.includes('"agent ready"'));
      await until(
        () => ready().length === 2,
        () => `two workers ready:\n${p.out()}${p.err()}`,
        STARTING,
      );
      const port = Number(/"supervisor":true.*"port":(\d+)/.exec(p.out())?.[1]);
      const workers = childrenOf(p.child.pid!);
      expect(workers).toHaveLength(2);
      // Both listen on the one port.
      const listening = p
        .out()
        .split('\n')
        .filter((l) => l.includes('listening on'));
      expect(listening.map((l) => JSON.parse(l).port)).toEqual([port, port]);

      const base = `http://127.0.0.1:${port}`;
      const ws = await connectWs(`ws://127.0.0.1:${port}/`);
      // `since: 0`: each response is either replayed or live, whenever the subscription is in place.
      ws.send({ type: 'subscribe', sessionId: 'w', since: 0 });
      // Fresh connections, spread by the kernel over the workers; one conversation throughout.
      const ask = async (message: string) => {
        const res = await fetch(`${base}/api/message-sync`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Connection: 'close' },
          body: JSON.stringify({ message, sessionId: 'w' }),
        });
        return [res.status, ((await res.json()) as { response?: string }).response];
      };
      for (let i = 0; i < 6; i++) expect(await ask(`q${i}`)).toEqual([200, `You said: q${i}`]);
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: q5');
      expect(ws.frames.filter((f) => f.event === 'response').map((f) => f.data.seq)).toEqual([2, 4, 6, 8, 10, 12]);
      ws.close();

      process.kill(workers[0]!, 'SIGKILL');
      await until(
        () => p.out().includes('a worker died; starting another') && ready().length === 3,
        () => `a new worker:\n${p.out()}${p.err()}`,
        STARTING,
      );
      expect(childrenOf(p.child.pid!)).toHaveLength(2);
      for (let i = 6; i < 9; i++) expect(await ask(`q${i}`)).toEqual([200, `You said: q${i}`]);
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exited).toBe(0);
    expect(childrenOf(p.child.pid!)).toEqual([]);
  });
});
