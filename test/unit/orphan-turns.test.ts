/**
 * The sweep that takes over sessions whose owner died with a turn open (src/cluster/orphan-turns.ts): it takes a
 * free lease's session over; for a lease after its Redis connection came back it takes nothing over (every lease
 * lapsed in the outage, and live owners renew theirs first).
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchOrphanTurns } from '../../src/cluster/orphan-turns.ts';
import { watchReconnects } from '../../src/cluster/reconnects.ts';
import type { RedisConnection } from '../../src/redis/index.ts';
import { createLogger } from '../../src/log/index.ts';

const LEASE_MS = 1000;

function sweeper() {
  // A connection as the reconnect watch sees it: its events, and reads that answer (Redis has loaded its data).
  const client = Object.assign(new EventEmitter(), { isReady: true, exists: () => Promise.resolve(0) });
  const adopted: unknown[] = [];
  const reconnects = watchReconnects(client as unknown as RedisConnection, LEASE_MS, { now: () => Date.now() });
  const watch = watchOrphanTurns({
    quietUntil: reconnects.quietUntil,
    leaseMs: LEASE_MS,
    clock: { now: () => Date.now() },
    ids: () => 'id',
    log: createLogger('silent'),
    openTurnSessions: () => Promise.resolve(['s1']),
    holds: () => false,
    holder: () => Promise.resolve(null),
    run: (command) => {
      adopted.push(command.payload);
      return Promise.resolve();
    },
    takeOver: 'agent.openSession',
  });
  return { client, adopted, watch };
}

describe('the orphan-turn sweep', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('takes over a session with a turn open whose lease is free', async () => {
    vi.useFakeTimers();
    const { adopted, watch } = sweeper();
    await vi.advanceTimersByTimeAsync(LEASE_MS / 2);
    expect(adopted).toEqual([{ sessionId: 's1' }]);
    watch.close();
  });

  it('takes nothing over for a lease after its Redis connection came back, then goes on', async () => {
    vi.useFakeTimers();
    const { client, adopted, watch } = sweeper();
    client.emit('error', new Error('connection lost'));
    client.emit('ready');
    await vi.advanceTimersByTimeAsync(LEASE_MS - 1);
    expect(adopted).toEqual([]);
    await vi.advanceTimersByTimeAsync(LEASE_MS / 2);
    expect(adopted).toEqual([{ sessionId: 's1' }]);
    watch.close();
  });
});
