/**
 * Where the rate-limit windows are counted (`server.limits.store`, limitsStoreOf): in the Redis the instances share —
 * the sessions' own, or the one beside PostgreSQL (`storage.redis`) — else in each process; `redis` without one is
 * refused naming the field.
 */
import { describe, expect, it } from 'vitest';
import { agentConfigSchema, limitsStoreOf } from '../../src/config/schema.ts';

const config = (storage: Record<string, unknown>, store?: string) =>
  agentConfigSchema.safeParse({ llm: { model: 'm' }, storage, server: { limits: { ...(store && { store }) } } });
const postgres = { type: 'postgres', url: 'postgres://agentd@127.0.0.1:5432/agentd' };
const beside = { ...postgres, redis: { url: 'redis://127.0.0.1:6379' } };

describe('the limits store', () => {
  it('is the shared Redis by default: the sessions’ own, or the one beside PostgreSQL; else memory', () => {
    expect(limitsStoreOf(config({ type: 'redis', url: 'redis://127.0.0.1:6379' }).data!)).toBe('redis');
    expect(limitsStoreOf(config(beside).data!)).toBe('redis');
    expect(limitsStoreOf(config(postgres).data!)).toBe('memory');
    expect(limitsStoreOf(config({ type: 'memory' }).data!)).toBe('memory');
  });

  it('refuses redis where no Redis is shared, naming the field', () => {
    expect(config(beside, 'redis').success).toBe(true);
    const refused = config(postgres, 'redis');
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(['server', 'limits', 'store']);
  });
});
