/**
 * Closing a Redis connection never hangs: when Redis goes away while a reply is outstanding, node-redis's own
 * `close()` waits for it forever, and agentd's stop with it (a real redis-server, paused, then stopped).
 */
import { pino } from 'pino';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { closeRedisConnection, createRedisConnection } from '../../src/redis/index.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';

describe.skipIf(!hasRedisServer())('closing a Redis connection', () => {
  it('ends, and fails the outstanding command, when Redis went away before its reply', async () => {
    const redis = await startRedis();
    const client = createRedisConnection(redis.url, 'test', pino({ level: 'silent' }));
    await client.connect();
    const pauser = createClient({ url: redis.url });
    pauser.on('error', () => undefined); // it sees Redis go
    await pauser.connect();
    await pauser.sendCommand(['CLIENT', 'PAUSE', '60000', 'ALL']);
    // Expected at once: Redis may reset the socket during the close, failing the command before the close returns.
    const outstandingFails = expect(client.get('held-by-the-pause')).rejects.toThrow();
    const stopped = redis.stop(); // SIGTERM now: the socket closes while the connection is closing
    await closeRedisConnection(client);
    await outstandingFails;
    expect(client.isOpen).toBe(false);
    pauser.destroy();
    await stopped;
  });
});
