/**
 * A2A's push notification config methods (docs/a2a.md, "Push notifications"): v1.0's Create/Get/List/Delete
 * TaskPushNotificationConfig and v0.3's `tasks/pushNotificationConfig/set|get|list|delete`, on the caller's own
 * tasks only (another principal's task, or none, is TaskNotFound, as for GetTask). A config names a URL (the URL
 * policy of remote tool servers: INVALID_REQUEST with `details.field`), an optional `token` and an optional
 * `authentication` (scheme and credentials); it is kept with the version it was set in, and notifications speak it.
 * An unknown config id is TaskNotFound naming `configId`; a task holds at most MAX_CONFIGS configs, and a principal at
 * most `server.limits.deliveries.pushConfigsPerPrincipal` on tasks not finished (RATE_LIMIT_EXCEEDED, 429).
 */
import { z } from 'zod';
import type { TurnFollower } from '../agent/index.ts';
import type { SessionAccess } from '../auth/index.ts';
import type { IdSource } from '../clock.ts';
import { AppError } from '../errors/index.ts';
import type { A2aPushConfigs, PushConfig } from './face-types.ts';
import { parseParams as parse } from './params.ts';
import type { PushMethod } from './rpc-methods.ts';
import { readTask } from './tasks.ts';
import { FINAL_STATES } from './task-view.ts';
import { taskIdSchema, type A2aVersion } from './wire.ts';

export const MAX_CONFIGS = 10;

const configId = z.string().min(1).max(128);
const secretText = z.string().max(4096);
const v1Config = z.looseObject({
  id: z.string().max(128).optional(),
  url: z.string().min(1).max(2048),
  token: secretText.optional(),
  authentication: z.looseObject({ scheme: z.string().max(64), credentials: secretText.optional() }).optional(),
});
/** v1.0: the config itself with its `taskId` (as the SDK sends it), or `{ taskId, configId?, config }`. */
const v1Nested = z.looseObject({ taskId: taskIdSchema, configId: configId.optional(), config: v1Config });
const v1Flat = v1Config.extend({ taskId: taskIdSchema });
const v1One = z.looseObject({ taskId: taskIdSchema, id: configId });
const v1List = z.looseObject({ taskId: taskIdSchema });
const v03Config = z.looseObject({
  id: z.string().max(128).optional(),
  url: z.string().min(1).max(2048),
  token: secretText.optional(),
  authentication: z
    .looseObject({ schemes: z.array(z.string().max(64)).max(8), credentials: secretText.optional() })
    .optional(),
});
const v03Set = z.looseObject({ taskId: taskIdSchema, pushNotificationConfig: v03Config });
const v03One = z.looseObject({ id: taskIdSchema, pushNotificationConfigId: configId.optional() });

type Given = Omit<PushConfig, 'version' | 'id'> & { id?: string | undefined };

function fromV03(c: z.output<typeof v03Config>): Given {
  const { id, url, token, authentication: auth } = c;
  const scheme = auth?.schemes[0];
  const authentication = scheme ? { scheme, ...(auth.credentials && { credentials: auth.credentials }) } : undefined;
  return { id, url, ...(token && { token }), ...(authentication && { authentication }) };
}

function fromV1(c: z.output<typeof v1Config>, id: string | undefined): Given {
  const auth = c.authentication;
  const authentication = auth?.scheme
    ? { scheme: auth.scheme, ...(auth.credentials && { credentials: auth.credentials }) }
    : undefined;
  return { id, url: c.url, ...(c.token && { token: c.token }), ...(authentication && { authentication }) };
}

function givenConfig(params: unknown, version: A2aVersion): { taskId: string; config: Given; field: string } {
  if (version === '0.3') {
    const p = parse(v03Set, params);
    return { taskId: p.taskId, config: fromV03(p.pushNotificationConfig), field: 'pushNotificationConfig.url' };
  }
  const nested = typeof params === 'object' && params !== null && 'config' in params;
  const p = nested ? parse(v1Nested, params) : { ...parse(v1Flat, params), configId: undefined };
  const c = 'config' in p ? p.config : p;
  return { taskId: p.taskId, config: fromV1(c, p.configId ?? c.id), field: nested ? 'config.url' : 'url' };
}

/** Where a message's `configuration` holds its push config in each version (its `taskId`, if any, is ignored). */
const MESSAGE_CONFIG_FIELD = {
  '1.0': 'taskPushNotificationConfig',
  '0.3': 'pushNotificationConfig',
} as const satisfies Record<A2aVersion, string>;
const v1Message = z.looseObject({
  configuration: z.looseObject({ taskPushNotificationConfig: v1Config.optional() }).optional(),
});
const v03Message = z.looseObject({
  configuration: z.looseObject({ pushNotificationConfig: v03Config.optional() }).optional(),
});

/**
 * The push config a message's `configuration` carries (SendMessage / message/send / message/stream), checked as
 * Create's is (its fields, the URL policy naming `configuration.<field>.url`); undefined when it carries none.
 */
export function messagePushConfig(
  configuration: unknown,
  version: A2aVersion,
  push: A2aPushConfigs | undefined,
): Given | undefined {
  const field = `configuration.${MESSAGE_CONFIG_FIELD[version]}`;
  let given: Given | undefined;
  if (version === '1.0') {
    const c = parse(v1Message, { configuration }).configuration?.taskPushNotificationConfig;
    given = c && fromV1(c, c.id);
  } else {
    const c = parse(v03Message, { configuration }).configuration?.pushNotificationConfig;
    given = c && fromV03(c);
  }
  if (!given) return undefined;
  if (!push) throw new AppError('PUSH_NOTIFICATION_NOT_SUPPORTED', 'Push notifications are not supported');
  push.checkUrl(given.url, `${field}.url`);
  return given;
}

/** A kept config as the caller's version writes it. */
export function encodePushConfig(taskId: string, c: PushConfig, v: A2aVersion): object {
  const token = c.token === undefined ? {} : { token: c.token };
  if (v === '1.0') {
    const authentication = c.authentication && { authentication: c.authentication };
    return { taskId, id: c.id, url: c.url, ...token, ...authentication };
  }
  const authentication = c.authentication && {
    authentication: {
      schemes: [c.authentication.scheme],
      ...(c.authentication.credentials !== undefined && { credentials: c.authentication.credentials }),
    },
  };
  return { taskId, pushNotificationConfig: { id: c.id, url: c.url, ...token, ...authentication } };
}

/** Keeps `config` on the task (an id made when it has none); a task holds at most MAX_CONFIGS (INVALID_REQUEST). */
export async function keepPushConfig(
  push: A2aPushConfigs,
  ids: IdSource,
  task: { key: string; turnId: string; taskId: string; finished?: boolean },
  config: Given,
  version: A2aVersion,
): Promise<PushConfig> {
  const configs = await push.list(task.key, task.turnId);
  const id = config.id || ids();
  if (configs.length >= MAX_CONFIGS && !configs.some((c) => c.id === id))
    throw new AppError(
      'INVALID_REQUEST',
      `Task "${task.taskId}" has ${MAX_CONFIGS} push notification configs already`,
      { field: 'id', reason: 'too_many', max: MAX_CONFIGS },
    );
  const kept: PushConfig = { ...config, id, version };
  await push.set(task.key, task.turnId, kept, { finished: task.finished === true });
  return kept;
}

export interface PushCallContext {
  version: A2aVersion;
  sessions: SessionAccess;
}

export function createPushMethods(deps: { follower: TurnFollower; ids: IdSource; push?: A2aPushConfigs | undefined }) {
  const { follower } = deps;
  const configsOf = (push: A2aPushConfigs) => async (taskId: string, sessions: SessionAccess) => {
    const { view, key } = await readTask(follower, taskId, sessions);
    return { key, turnId: view.turnId, configs: await push.list(key, view.turnId) };
  };
  const noConfig = (taskId: string, id: string) =>
    new AppError('TASK_NOT_FOUND', `Task "${taskId}" has no push notification config "${id}"`, {
      taskId,
      configId: id,
    });

  async function set(push: A2aPushConfigs, params: unknown, ctx: PushCallContext): Promise<object> {
    const { taskId, config, field } = givenConfig(params, ctx.version);
    push.checkUrl(config.url, field);
    const { key, view } = await readTask(follower, taskId, ctx.sessions);
    const task = { key, turnId: view.turnId, taskId, finished: FINAL_STATES.has(view.state) };
    const kept = await keepPushConfig(push, deps.ids, task, config, ctx.version);
    return encodePushConfig(taskId, kept, ctx.version);
  }

  /** The config a Get or Delete names; v0.3's Get may leave its id out (the task's first config). */
  async function one(push: A2aPushConfigs, params: unknown, ctx: PushCallContext, idRequired: boolean) {
    const { taskId, id } =
      ctx.version === '1.0'
        ? parse(v1One, params)
        : (({ id: t, pushNotificationConfigId: c }) => ({ taskId: t, id: c }))(parse(v03One, params));
    if (id === undefined && idRequired)
      throw new AppError('MISSING_FIELD', 'Invalid params: pushNotificationConfigId: Required');
    const found = await configsOf(push)(taskId, ctx.sessions);
    const config = id === undefined ? found.configs[0] : found.configs.find((c) => c.id === id);
    if (!config) throw noConfig(taskId, id ?? '');
    return { ...found, taskId, config };
  }

  return async function call(method: PushMethod, params: unknown, ctx: PushCallContext): Promise<unknown> {
    const { push } = deps;
    if (!push) throw new AppError('PUSH_NOTIFICATION_NOT_SUPPORTED', 'Push notifications are not supported');
    switch (method) {
      case 'pushSet':
        return set(push, params, ctx);
      case 'pushGet': {
        const { taskId, config } = await one(push, params, ctx, false);
        return encodePushConfig(taskId, config, ctx.version);
      }
      case 'pushList': {
        const taskId = ctx.version === '1.0' ? parse(v1List, params).taskId : parse(v03One, params).id;
        const { configs } = await configsOf(push)(taskId, ctx.sessions);
        const encoded = configs.map((c) => encodePushConfig(taskId, c, ctx.version));
        return ctx.version === '1.0' ? { configs: encoded, nextPageToken: '' } : encoded;
      }
      case 'pushDelete': {
        const { key, turnId, config } = await one(push, params, ctx, true);
        await push.delete(key, turnId, config.id);
        return ctx.version === '1.0' ? {} : null;
      }
    }
  };
}
