/**
 * What each route of ROUTES takes and answers, as types read off the server's own zod schemas (the ones that parse
 * its requests and publish /api/openapi.json): `body` and `query` as a caller writes them (`z.input`), `answer` as
 * the server sends it (`z.output`). Type imports only: nothing here reaches the compiled client.
 */
import type { z } from 'zod';
import type { RESPONSES } from '../http/routes/shapes.ts';
import type {
  historyQuery,
  messageSchema,
  messageSyncSchema,
  ownerQuery,
  resetSchema,
} from '../http/routes/agent-routes.ts';
import type { sessionsQuery } from '../http/routes/session-pages.ts';
import type { appCallSchema } from '../http/routes/app-routes.ts';
import type { exportQuery, forkSchema } from '../http/routes/session-transfer-routes.ts';
import type { connectA2aSchema, connectSchema, executeQuery, toolArgs } from '../http/routes/mcp-routes.ts';
import type { promptArgs, rootsBody, uriBody } from '../http/routes/mcp-feature-routes.ts';
import type { ApprovalReply, ClientToolReply, ElicitationAction } from '../conversation/records.ts';
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
import type { RouteName } from './routes.ts';

type In<S extends z.ZodType> = z.input<S>;
type Out<S extends z.ZodType> = z.output<S>;
type R = typeof RESPONSES;
type Owner = In<typeof ownerQuery>;
type ElicitationAnswer = { action: ElicitationAction; content?: Record<string, unknown> };

/** One route's types: `body` (absent: none), `query` (absent: none), `answer`. */
interface Io<A, B = never, Q = never> {
  answer: A;
  body: B;
  query: Q;
}

export interface RouteTypes {
  health: Io<Out<R['health']>>;
  live: Io<Out<R['live']>>;
  ready: Io<Out<R['ready']>>;
  configYaml: Io<string>;
  openApi: Io<Out<R['openApi']>>;
  metrics: Io<string>;
  jwks: Io<{ keys: Record<string, unknown>[] }>;
  agentCard: Io<Record<string, unknown>>;
  agUiCapabilities: Io<Record<string, unknown>>;
  messageSync: Io<Out<R['messageSync']>, In<typeof messageSyncSchema>>;
  message: Io<Out<R['messageQueued']>, In<typeof messageSchema>>;
  reset: Io<Out<R['reset']>, In<typeof resetSchema>>;
  listSessions: Io<Out<R['sessions']>, never, In<typeof sessionsQuery>>;
  history: Io<Out<R['history']>, never, In<typeof historyQuery>>;
  deleteSession: Io<Out<R['sessionDeleted']>, never, Owner>;
  cancel: Io<Out<R['sessionCancelled']>, never, Owner>;
  exportSession: Io<string, never, In<typeof exportQuery>>;
  importSession: Io<Out<R['sessionCreated']>, string>;
  forkSession: Io<Out<R['sessionCreated']>, In<typeof forkSchema>, Owner>;
  compact: Io<Out<R['compacted']>, never, Owner>;
  toolApp: Io<string, never, Owner>;
  appToolCall: Io<Out<R['appCall']>, In<typeof appCallSchema>, Owner>;
  listQuestions: Io<Out<R['questions']>, never, Owner>;
  answerQuestion: Io<Out<R['questionAnswered']>, ApprovalReply | ElicitationAnswer | ClientToolReply, Owner>;
  listApprovals: Io<Out<R['approvals']>, never, Owner>;
  answerApproval: Io<Out<R['approvalAnswered']>, ApprovalReply, Owner>;
  listElicitations: Io<Out<R['elicitations']>, never, Owner>;
  answerElicitation: Io<Out<R['elicitationAnswered']>, ElicitationAnswer, Owner>;
  listClientTools: Io<Out<R['clientToolCalls']>, never, Owner>;
  answerClientTool: Io<Out<R['clientToolAnswered']>, ClientToolReply, Owner>;
  listServers: Io<Out<R['servers']>>;
  connectServer: Io<Out<R['serverConnected']>, In<typeof connectSchema>>;
  connectA2aAgent: Io<Out<R['serverConnected']>, In<typeof connectA2aSchema>>;
  listTools: Io<Out<R['tools']>>;
  executeTool: Io<Out<R['toolExecuted']>, In<typeof toolArgs>, In<typeof executeQuery>>;
  removeServer: Io<Out<R['serverRemoved']>>;
  signInStatus: Io<Out<R['signIn']>>;
  signIn: Io<Out<R['signIn']>>;
  signOut: Io<Out<R['signIn']>>;
  restartServer: Io<Out<R['serverConnected']>>;
  listResources: Io<Out<R['resources']>>;
  readResource: Io<Out<R['resourceRead']>, never, In<typeof uriBody>>;
  subscribeResource: Io<Out<R['subscription']>, In<typeof uriBody>>;
  unsubscribeResource: Io<Out<R['subscription']>, In<typeof uriBody>>;
  listPrompts: Io<Out<R['prompts']>>;
  getPrompt: Io<Out<R['prompt']>, In<typeof promptArgs>>;
  setRoots: Io<Out<R['roots']>, In<typeof rootsBody>>;
  createSchedule: Io<Out<(typeof SCHEDULES)['schedule']>, In<typeof scheduleSchema>>;
  listSchedules: Io<Out<(typeof SCHEDULES)['schedules']>>;
  getSchedule: Io<Out<(typeof SCHEDULES)['schedule']>, never, In<typeof scheduleOwner>>;
  pauseSchedule: Io<Out<(typeof SCHEDULES)['schedule']>, In<typeof pauseBody>, In<typeof scheduleOwner>>;
  deleteSchedule: Io<Out<(typeof SCHEDULES)['scheduleDeleted']>, never, In<typeof scheduleOwner>>;
  scheduleRuns: Io<Out<(typeof SCHEDULES)['scheduleRuns']>, never, In<typeof runsQuery>>;
  memory: Io<Out<(typeof MEMORY)['memory']>, never, In<typeof listQuery>>;
  remember: Io<Out<(typeof MEMORY)['memoryItem']>, In<typeof itemBody>, In<typeof memoryOwner>>;
  eraseMemory: Io<Out<(typeof MEMORY)['memoryErased']>, never, In<typeof memoryOwner>>;
  confirmMemory: Io<Out<(typeof MEMORY)['memoryConfirmed']>, In<typeof confirmBody>, In<typeof memoryOwner>>;
  setProfile: Io<Out<(typeof MEMORY)['memoryProfile']>, In<typeof profileBody>, In<typeof memoryOwner>>;
  exportMemory: Io<Out<(typeof MEMORY)['memoryExport']>, never, In<typeof memoryOwner>>;
  forget: Io<Out<(typeof MEMORY)['memoryForgotten']>, never, In<typeof memoryOwner>>;
  addWebhook: Io<Out<(typeof WEBHOOKS)['webhook']>, In<typeof webhookSchema>>;
  listWebhooks: Io<Out<(typeof WEBHOOKS)['webhooks']>>;
  getWebhook: Io<Out<(typeof WEBHOOKS)['webhook']>>;
  deleteWebhook: Io<Out<(typeof WEBHOOKS)['webhook']>>;
  deliveries: Io<Out<(typeof WEBHOOKS)['deliveries']>, never, In<typeof deliveriesQuery>>;
  usage: Io<Out<(typeof USAGE)['usage']>, never, In<typeof usageQuery>>;
}

/** The compiler names a route of ROUTES without types, or types of no route. */
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const ROUTES_TYPED: Exact<keyof RouteTypes, RouteName> = true;
