/** The features' routes in the client's list of operations (routes.ts): schedules, memory, webhooks, the usage report. */
import type { z } from 'zod';
import type { scheduleSchema } from '../config/schedules-schema.ts';
import type { webhookSchema } from '../config/webhooks-schema.ts';
import type {
  RESPONSES as SCHEDULES,
  ownerQuery as scheduleOwner,
  pauseBody,
  runsQuery,
} from '../schedules/feature/routes.ts';
import type {
  RESPONSES as MEMORY,
  confirmBody,
  itemBody,
  listQuery,
  ownerQuery as memoryOwner,
  profileBody,
} from '../memory/feature/routes.ts';
import type { RESPONSES as WEBHOOKS, deliveriesQuery } from '../webhooks/feature/routes.ts';
import type { RESPONSES as USAGE, usageQuery } from '../spend/feature/routes.ts';
import { route } from './route-kit.ts';

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;
type S = typeof SCHEDULES;
type M = typeof MEMORY;
type W = typeof WEBHOOKS;
type U = typeof USAGE;
const OWNER = ['owner'] as const;

export const FEATURE_ROUTES = {
  createSchedule: route<Out<S['schedule']>, In<typeof scheduleSchema>>()({
    method: 'POST',
    path: '/api/schedules',
    body: 'json',
  }),
  listSchedules: route<Out<S['schedules']>>()({ method: 'GET', path: '/api/schedules' }),
  getSchedule: route<Out<S['schedule']>, never, In<typeof scheduleOwner>>()({
    method: 'GET',
    path: '/api/schedules/:id',
    query: OWNER,
  }),
  pauseSchedule: route<Out<S['schedule']>, In<typeof pauseBody>, In<typeof scheduleOwner>>()({
    method: 'PATCH',
    path: '/api/schedules/:id',
    query: OWNER,
    body: 'json',
  }),
  deleteSchedule: route<Out<S['scheduleDeleted']>, never, In<typeof scheduleOwner>>()({
    method: 'DELETE',
    path: '/api/schedules/:id',
    query: OWNER,
  }),
  scheduleRuns: route<Out<S['scheduleRuns']>, never, In<typeof runsQuery>>()({
    method: 'GET',
    path: '/api/schedules/:id/runs',
    query: ['owner', 'limit'],
  }),

  memory: route<Out<M['memory']>, never, In<typeof listQuery>>()({
    method: 'GET',
    path: '/api/memory',
    query: ['owner', 'q', 'limit', 'after'],
  }),
  remember: route<Out<M['memoryItem']>, In<typeof itemBody>, In<typeof memoryOwner>>()({
    method: 'POST',
    path: '/api/memory',
    query: OWNER,
    body: 'json',
  }),
  eraseMemory: route<Out<M['memoryErased']>, never, In<typeof memoryOwner>>()({
    method: 'DELETE',
    path: '/api/memory',
    query: OWNER,
  }),
  confirmMemory: route<Out<M['memoryConfirmed']>, In<typeof confirmBody>, In<typeof memoryOwner>>()({
    method: 'POST',
    path: '/api/memory/confirm',
    query: OWNER,
    body: 'json',
  }),
  setProfile: route<Out<M['memoryProfile']>, In<typeof profileBody>, In<typeof memoryOwner>>()({
    method: 'PUT',
    path: '/api/memory/profile',
    query: OWNER,
    body: 'json',
  }),
  exportMemory: route<Out<M['memoryExport']>, never, In<typeof memoryOwner>>()({
    method: 'GET',
    path: '/api/memory/export',
    query: OWNER,
  }),
  forget: route<Out<M['memoryForgotten']>, never, In<typeof memoryOwner>>()({
    method: 'DELETE',
    path: '/api/memory/:id',
    query: OWNER,
  }),

  addWebhook: route<Out<W['webhook']>, In<typeof webhookSchema>>()({
    method: 'POST',
    path: '/api/webhooks',
    body: 'json',
  }),
  listWebhooks: route<Out<W['webhooks']>>()({ method: 'GET', path: '/api/webhooks' }),
  getWebhook: route<Out<W['webhook']>>()({ method: 'GET', path: '/api/webhooks/:webhookId' }),
  deleteWebhook: route<Out<W['webhook']>>()({ method: 'DELETE', path: '/api/webhooks/:webhookId' }),
  deliveries: route<Out<W['deliveries']>, never, In<typeof deliveriesQuery>>()({
    method: 'GET',
    path: '/api/webhooks/:webhookId/deliveries',
    query: ['limit'],
  }),

  usage: route<Out<U['usage']>, never, In<typeof usageQuery>>()({
    method: 'GET',
    path: '/api/usage',
    query: ['principal', 'from', 'to', 'groupBy'],
  }),
} as const;
