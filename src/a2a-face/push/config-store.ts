/**
 * Tasks' push notification configs, kept on the record store (src/store/records) of the sessions' medium: `jsonl` the
 * 0600 file `<dir>/.agentd-records.jsonl`, `redis` keys shared by every instance, `memory` nothing durable. Why there
 * and not in the session log: a config holds the caller's token and credentials, which must never reach the log's
 * history, export or replay, and it changes apart from the conversation (the session's decider stays as it is).
 * Contracts:
 * - One record per task (`a2a-push-<sha256 of session key and turn>`): `set` replaces a config of the same id,
 *   `delete` removes one; both change the record conditioned on the version they read (retried on a conflict), so
 *   instances never lose a change.
 * - A task without a config costs one in-process lookup (`jsonl`, `memory`) or one small read (`redis`).
 * - `checkUrl` is the egress policy (src/egress/policy.ts): http(s) only, never link-local or metadata addresses,
 *   private networks only when allowed; a refusal is INVALID_REQUEST naming the caller's field.
 * - `takeOver(secrets)` moves the configs an earlier agentd kept in the secret store (with its index of tasks) onto
 *   the record store, and removes them there.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { A2aPushConfigs, PushConfig } from '../index.ts';
import { AppError } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';
import { records } from '../../store/index.ts';
import type { SecretStore } from '../../store/secret-store.ts';
import { checkUrl, type UrlPolicy } from '../../egress/url-policy.ts';

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

/** Where an earlier agentd listed the tasks with configs in the secret store. */
const LEGACY_INDEX = 'a2a-push-tasks';
const ATTEMPTS = 100;

export function createPushConfigStore(
  store: records.RecordStore,
  policy: UrlPolicy,
  deps: { log: Logger; now?: () => number },
): A2aPushConfigs & { takeOver(secrets: SecretStore): Promise<void> } {
  const tasks = records.collection(store, { ns: 'a2a-push.configs', schema: recordSchema, log: deps.log });

  async function read(sessionKey: string, turnId: string) {
    const item = await tasks.get(pushConfigKey(sessionKey, turnId));
    // A hash shared by two tasks (never seen) answers no config rather than another task's.
    if (!item || item.value.sessionKey !== sessionKey || item.value.turnId !== turnId)
      return { version: item?.version ?? 0, configs: [] };
    return { version: item.version, configs: item.value.configs.map((c) => c as PushConfig) };
  }

  async function change(sessionKey: string, turnId: string, edit: (configs: PushConfig[]) => PushConfig[]) {
    const key = pushConfigKey(sessionKey, turnId);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const { version, configs } = await read(sessionKey, turnId);
      const next = edit(configs);
      const done =
        next.length === 0
          ? version === 0 || (await tasks.delete(key, { ifVersion: version }))
          : await tasks.put(key, { sessionKey, turnId, configs: next }, { ifVersion: version });
      if (done) return;
    }
    throw new AppError('INTERNAL_ERROR', 'a2a push configs: a change kept conflicting', { reason: 'conflict' });
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
      const stamped = deps.now ? { ...config, setAt: deps.now() } : config;
      await change(sessionKey, turnId, (configs) => [...configs.filter((c) => c.id !== config.id), stamped]);
    },
    list: async (sessionKey, turnId) => (await read(sessionKey, turnId)).configs,
    async delete(sessionKey, turnId, id) {
      let found = false;
      await change(sessionKey, turnId, (configs) => {
        found = configs.some((c) => c.id === id);
        return configs.filter((c) => c.id !== id);
      });
      return found;
    },
    async takeOver(secrets) {
      const raw = await secrets.get(LEGACY_INDEX);
      const keys = raw === undefined ? [] : (z.array(z.string()).safeParse(JSON.parse(raw)).data ?? []);
      for (const key of keys) {
        const text = await secrets.get(key);
        const kept = text === undefined ? undefined : recordSchema.safeParse(JSON.parse(text)).data;
        if (kept) await tasks.put(key, kept, { ifVersion: 0 });
        await secrets.delete(key);
      }
      if (raw !== undefined) await secrets.delete(LEGACY_INDEX);
      if (keys.length > 0) deps.log.info({ tasks: keys.length }, 'a2a push: configs moved onto the record store');
    },
  };
}
