/** JSON-RPC requests of the A2A face: the envelope, each version's method names, and the params of the task methods. */
import { z } from 'zod';
import { incomingMessageSchema, taskIdSchema, type A2aVersion } from './wire.ts';

export const requestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z.string(),
  params: z.unknown().optional(),
});
/** `returnImmediately` (v1.0) or `blocking: false` (0.3): answer with the task as soon as it is started. */
export const sendParams = z.looseObject({
  message: incomingMessageSchema,
  configuration: z
    .looseObject({
      historyLength: z.number().int().min(0).optional(),
      returnImmediately: z.boolean().optional(),
      blocking: z.boolean().optional(),
    })
    .optional(),
});
export const idParams = z.looseObject({ id: taskIdSchema, historyLength: z.number().int().min(0).optional() });

const METHODS = {
  '1.0': {
    SendMessage: 'send',
    SendStreamingMessage: 'stream',
    GetTask: 'get',
    ListTasks: 'list',
    CancelTask: 'cancel',
    SubscribeToTask: 'subscribe',
    GetExtendedAgentCard: 'card',
    CreateTaskPushNotificationConfig: 'pushSet',
    GetTaskPushNotificationConfig: 'pushGet',
    ListTaskPushNotificationConfigs: 'pushList',
    ListTaskPushNotificationConfig: 'pushList',
    DeleteTaskPushNotificationConfig: 'pushDelete',
  },
  '0.3': {
    'message/send': 'send',
    'message/stream': 'stream',
    'tasks/get': 'get',
    'tasks/cancel': 'cancel',
    'tasks/resubscribe': 'subscribe',
    'agent/getAuthenticatedExtendedCard': 'card',
    'tasks/pushNotificationConfig/set': 'pushSet',
    'tasks/pushNotificationConfig/get': 'pushGet',
    'tasks/pushNotificationConfig/list': 'pushList',
    'tasks/pushNotificationConfig/delete': 'pushDelete',
  },
} as const satisfies Record<A2aVersion, Record<string, Method>>;
export type PushMethod = 'pushSet' | 'pushGet' | 'pushList' | 'pushDelete';
export type Method = 'send' | 'stream' | 'get' | 'list' | 'cancel' | 'subscribe' | 'card' | PushMethod;
/** A v1.0 method's name (what an HTTP+JSON route answers). */
export type V1Method = keyof (typeof METHODS)['1.0'];
export type SendParams = z.output<typeof sendParams>;

/** The method a request names in this version; own names only (`toString` or `__proto__` are no method of ours). */
export function methodOf(version: A2aVersion, name: string): Method | undefined {
  const methods: Readonly<Record<string, Method>> = METHODS[version];
  return Object.hasOwn(methods, name) ? methods[name] : undefined;
}
