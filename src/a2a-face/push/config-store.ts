/**
 * Tasks' push notification configs, kept in the secret store (src/store/secret-store.ts) on the sessions' medium:
 * `jsonl` a 0600 file per task under `<dir>/.agentd-secrets/`, `redis` a key shared by every instance, `memory`
 * nothing durable. Why there and not in the session log: a config holds the caller's token and credentials, which
 * must never reach the log's history, export or replay, and it changes apart from the conversation (the session's
 * decider stays as it is). Contracts:
 * - One record per task (`a2a-push-<sha256 of session key and turn>`): `set` replaces a config of the same id,
 *   `delete` removes one; both change the record under a lease of the medium, so instances never lose a change.
 * - A task without a config costs no read of the store (config-index.ts; on redis while its changes are heard).
 * - `checkUrl` is the URL policy of remote tool servers (`server.mcp`): http(s) only, never link-local or metadata
 *   addresses, private networks only when allowed; a refusal is INVALID_REQUEST naming the caller's field.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { A2aPushConfigs, PushConfig } from '../index.ts';
import { AppError } from '../../errors/index.ts';
import type { Lease, SecretStore } from '../../store/secret-store.ts';
import { checkUrl, type UrlPolicy } from '../../egress/url-policy.ts';
import { createConfigIndex, type IndexChanges } from './config-index.ts';

const LOCK_MS = 5_000;

const pushConfigSchema = z.object({
  id: z.string(),
  url: z.string(),
  token: z.string().optional(),
  authentication: z.object({ scheme: z.string(), credentials: z.string().optional() }).optional(),
  version: z.enum(['1.0', '0.3']),
  setAt: z.number().optional(),
});
const recordSchema = z.object({ sessionKey: z.string(), turnId: z.string(), configs: z.array(pushConfigSchema) });

/** The secret store's key of a task's configs. */
export const pushConfigKey = (sessionKey: string, turnId: string): string =>
  `a2a-push-${createHash('sha256').update(`${sessionKey}\n${turnId}`).digest('hex').slice(0, 48)}`;

/**
 * `changes`: how the instances sharing the medium (redis) hear each other's changes; absent: one instance.
 * `kept.now` stamps a config's `setAt`.
 */
export function createPushConfigStore(
  secrets: SecretStore,
  policy: UrlPolicy,
  changes?: IndexChanges,
  kept: { now?: () => number } = {},
): A2aPushConfigs {
  const index = createConfigIndex(secrets, changes, locked);
  async function read(sessionKey: string, turnId: string): Promise<PushConfig[]> {
    const key = pushConfigKey(sessionKey, turnId);
    if (!(await index.mayHave(key))) return [];
    const raw = await secrets.get(key);
    if (raw === undefined) return [];
    const record = recordSchema.safeParse(JSON.parse(raw)).data;
    // A hash shared by two tasks (never seen) answers no config rather than another task's.
    if (!record || record.sessionKey !== sessionKey || record.turnId !== turnId) return [];
    return record.configs.map((c) => pushConfigSchema.parse(c) as PushConfig);
  }

  async function locked(key: string): Promise<Lease> {
    const deadline = Date.now() + LOCK_MS;
    for (;;) {
      const lease = await secrets.claim(`${key}-lock`, LOCK_MS);
      if (lease) return lease;
      if (Date.now() > deadline) throw new Error('a2a push configs: the task is locked');
      await sleep(20);
    }
  }

  async function change(sessionKey: string, turnId: string, edit: (configs: PushConfig[]) => PushConfig[]) {
    const key = pushConfigKey(sessionKey, turnId);
    const lease = await locked(key);
    try {
      const configs = edit(await read(sessionKey, turnId));
      if (configs.length === 0) {
        await secrets.delete(key);
        await index.mark(key, false);
      } else {
        await index.mark(key, true);
        await secrets.set(key, JSON.stringify({ sessionKey, turnId, configs }));
      }
    } finally {
      await lease.release();
    }
  }

  return {
    checkUrl(url, field) {
      try {
        checkUrl(url, policy);
      } catch (err) {
        if (err instanceof AppError) throw new AppError('INVALID_REQUEST', err.message, { ...err.details, field });
        throw err;
      }
    },
    async set(sessionKey, turnId, config) {
      const stamped = kept.now ? { ...config, setAt: kept.now() } : config;
      await change(sessionKey, turnId, (configs) => [...configs.filter((c) => c.id !== config.id), stamped]);
    },
    list: read,
    async delete(sessionKey, turnId, id) {
      let found = false;
      await change(sessionKey, turnId, (configs) => {
        found = configs.some((c) => c.id === id);
        return configs.filter((c) => c.id !== id);
      });
      return found;
    },
  };
}
