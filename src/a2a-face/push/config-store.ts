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
 * - A principal holds at most `maxPerPrincipal` configs on tasks not finished: each such config has a small record
 *   (`a2a-push.live`, indexed by its owner, counted without a scan) written in the same commit as the config; a new
 *   one past the cap is RATE_LIMIT_EXCEEDED (429, `details.reason: push_configs_per_principal`). `finished(task)` (the
 *   task completed, failed or was canceled: no more notifications) drops its configs' records, and each expires a week
 *   after it was set, so a task that never finishes does not hold its room for ever. The configs themselves stay.
 *   Concurrent sets may pass the cap by the few in flight.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { A2aPushConfigs, PushConfig } from '../index.ts';
import { AppError } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';
import { records } from '../../store/index.ts';
import { checkUrl, type UrlPolicy } from '../../egress/url-policy.ts';
import { splitSessionKey } from '../../session-id.ts';
import { PUSH_HOLDER } from '../../webhooks/targets.ts';

const pushConfigSchema = z.object({
  id: z.string(),
  url: z.string(),
  token: z.string().optional(),
  authentication: z.object({ scheme: z.string(), credentials: z.string().optional() }).optional(),
  version: z.enum(['1.0', '0.3']),
  setAt: z.number().optional(),
});
const recordSchema = z.object({ sessionKey: z.string(), turnId: z.string(), configs: z.array(pushConfigSchema) });

/** The record of a task's configs. */
const pushConfigKey = (sessionKey: string, turnId: string): string =>
  `a2a-push-${createHash('sha256').update(`${sessionKey}\n${turnId}`).digest('hex').slice(0, 48)}`;

const ATTEMPTS = 100;
/** How long a config counts toward its principal's cap at most (its task not finished). */
const LIVE_MS = 7 * 24 * 3_600_000;
const liveSchema = z.object({ owner: z.string() });
const liveId = (key: string, configId: string) => `${key}/${configId}`;

export function createPushConfigStore(
  store: records.RecordStore,
  policy: UrlPolicy,
  deps: { log: Logger; now?: () => number; maxPerPrincipal?: number },
): A2aPushConfigs & {
  finished(key: string, turn: string): Promise<void>;
} {
  const tasks = records.collection(store, { ns: 'a2a-push.configs', schema: recordSchema, log: deps.log });
  /** One record per config of a task not finished, in its owner's group. */
  const live = records.collection(store, {
    ns: 'a2a-push.live',
    schema: liveSchema,
    indexes: (v) => [{ index: 'owner', group: v.owner, score: 0 }],
    log: deps.log,
  });
  const now = () => deps.now?.() ?? Date.now();

  async function read(sessionKey: string, turnId: string) {
    const item = await tasks.get(pushConfigKey(sessionKey, turnId));
    // A hash shared by two tasks (never seen) answers no config rather than another task's.
    if (!item || item.value.sessionKey !== sessionKey || item.value.turnId !== turnId)
      return { version: item?.version ?? 0, configs: [] };
    return { version: item.version, configs: item.value.configs.map((c) => c as PushConfig) };
  }

  /** Changes a task's configs (`edit`), and their live records (`also`) in the same commit. */
  async function change(
    sessionKey: string,
    turnId: string,
    edit: (configs: PushConfig[]) => PushConfig[],
    also: (key: string) => records.RecordWrite[] = () => [],
  ) {
    const key = pushConfigKey(sessionKey, turnId);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const { version, configs } = await read(sessionKey, turnId);
      const next = edit(configs);
      const write =
        next.length === 0
          ? version === 0
            ? []
            : [tasks.writes.delete(key, { ifVersion: version })]
          : [tasks.writes.put(key, { sessionKey, turnId, configs: next }, { ifVersion: version })];
      const writes = [...write, ...also(key)];
      if (writes.length === 0 || (await store.commit(writes))) return;
    }
    throw new AppError('INTERNAL_ERROR', 'a2a push configs: a change kept conflicting', { reason: 'conflict' });
  }

  /** RATE_LIMIT_EXCEEDED when `owner` holds its most live configs and `configId` is not one of them. */
  async function refuseOverCap(owner: string, sessionKey: string, turnId: string, configId: string) {
    const max = deps.maxPerPrincipal ?? Infinity;
    if ((await live.count('owner', owner)) < max) return;
    if (await live.get(liveId(pushConfigKey(sessionKey, turnId), configId))) return; // replaces one it holds
    throw new AppError(
      'RATE_LIMIT_EXCEEDED',
      `At most ${max} push notification configs per principal on tasks not finished; delete one, or wait for a task to finish`,
      { limit: max, remaining: 0, reason: 'push_configs_per_principal' },
    );
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
    async set(sessionKey, turnId, config, options = {}) {
      const stamped = deps.now ? { ...config, setAt: deps.now() } : config;
      const owner = PUSH_HOLDER(splitSessionKey(sessionKey).owner);
      const counted = !options.finished && deps.maxPerPrincipal !== undefined;
      if (counted) await refuseOverCap(owner, sessionKey, turnId, config.id);
      await change(
        sessionKey,
        turnId,
        (configs) => [...configs.filter((c) => c.id !== config.id), stamped],
        (key) => (counted ? [live.writes.put(liveId(key, config.id), { owner }, { expiresAt: now() + LIVE_MS })] : []),
      );
    },
    async finished(sessionKey, turnId) {
      const key = pushConfigKey(sessionKey, turnId);
      const { configs } = await read(sessionKey, turnId);
      const ids = configs.map((c) => liveId(key, c.id));
      const held = (await live.getMany(ids)).filter((item) => item !== undefined);
      if (held.length > 0) await store.commit(held.map((item) => live.writes.delete(item.id)));
    },
    list: async (sessionKey, turnId) => (await read(sessionKey, turnId)).configs,
    async delete(sessionKey, turnId, id) {
      let found = false;
      await change(
        sessionKey,
        turnId,
        (configs) => {
          found = configs.some((c) => c.id === id);
          return configs.filter((c) => c.id !== id);
        },
        (key) => [live.writes.delete(liveId(key, id))],
      );
      return found;
    },
  };
}
