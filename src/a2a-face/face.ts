/**
 * The agent served over A2A: JSON-RPC requests of v1.0 and v0.3 answered from the agent's bus and log.
 *
 * Why not the SDK's `DefaultRequestHandler` / `JsonRpcTransportHandler`: they own the task lifecycle
 * (a TaskStore the handler saves into, an in-process event bus per task, an AgentExecutor publishing
 * events). Here a task IS a turn of the event log: it is folded from stored and live frames by one
 * mapping (task-view.ts), so any instance answers `GetTask`/`SubscribeToTask` from the log, and
 * ownership, quotas and hop limits stay those of every other face. A second store would have to be
 * kept in step with the log. The SDK's client drives the tests; its types are not needed at run time.
 *
 * Contracts:
 * - `handle(request, ctx)` answers one JSON-RPC request (no batches: A2A has none) with a JSON-RPC
 *   response object, or with an async iterable of them for the streaming methods (SSE, one per event).
 * - Method names by version (`ctx.version`, from the `A2A-Version` header): v1.0 `SendMessage`,
 *   `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`,
 *   `GetExtendedAgentCard`, `*TaskPushNotificationConfig*`; v0.3 `message/send`, `message/stream`,
 *   `tasks/get`, `tasks/cancel`, `tasks/resubscribe`, `tasks/pushNotificationConfig/*`,
 *   `agent/getAuthenticatedExtendedCard`. Push-notification config methods answer -32003.
 * - contextId = the caller's session id (a message without one starts a new session, a fresh id);
 *   taskId = `<contextId>/<turnId>` (task-view.ts). Every session id goes through `ctx.sessions.key`, so a
 *   caller only reaches its own tasks (another principal's answer TaskNotFound, -32001).
 * - A message on an `input-required` task answers its approvals with a data part `{ approve, callId? }`
 *   (no `callId`: every waiting call), or a tool server's question with `{ elicitationId?, action,
 *   content? }` (no id: the one waiting), checked like the REST answer; both need the `approve` scope.
 * - `message.metadata["agentd/hops"]` counts agent-to-agent hops like /mcp; over `maxHops` is refused.
 * - `SendMessage` waits until the task is completed, failed, canceled or input-required, or `waitMs`
 *   passed (then the task is returned as it stands), or the client left.
 * - Errors are AppErrors encoded by `toA2aRpc` (src/errors): one table for every protocol.
 */
import { z } from 'zod';
import { pipeEvents, type AgentCommands, type AgentEvents, type TurnFollower } from '../agent/index.ts';
import type { SessionAccess } from '../auth/index.ts';
import type { Principal } from '../auth/index.ts';
import type { Bus } from '../bus/index.ts';
import type { IdSource } from '../clock.ts';
import { AppError, toA2aRpc } from '../errors/index.ts';
import { hopsOf } from '../tools/hops.ts';
import { sessionIdSchema, type SessionKey } from '../session-id.ts';
import { inFamily } from '../conversation/questions.ts';
import { FINAL_STATES, parseTaskId, taskIdOf, taskView, type TaskView } from './task-view.ts';
import { followTask, listTasks } from './tasks.ts';
import {
  encodeTask,
  incomingMessageSchema,
  readMessage,
  stateFromWire,
  streamEvents,
  taskIdSchema,
  wrap,
  type A2aVersion,
} from './wire.ts';

/** The bus as the face uses it: the agent's commands. */
export type A2aBus = Pick<Bus<AgentCommands, AgentEvents>, 'execute'>;

export interface A2aFaceDeps {
  bus: A2aBus;
  /** How the face follows a turn and reads tasks (src/agent/follow). */
  follower: TurnFollower;
  ids: IdSource;
  maxHops: number;
  /** How long a blocking `SendMessage` waits for the task to settle. */
  waitMs: number;
  /** Whether a principal may answer approvals (the `approve` route scope of server.auth). */
  mayApprove: (principal: Principal) => boolean;
  /** The card for `GetExtendedAgentCard`, given the origin the caller reached us at. */
  card: (origin: string) => object;
}

export interface A2aCallContext {
  version: A2aVersion;
  sessions: SessionAccess;
  principal: Principal;
  signal: AbortSignal;
  /** How the caller reached us (`endpointOrigin`), for the card. */
  origin: string;
}

type RpcId = string | number | null;
export type RpcResponse =
  { jsonrpc: '2.0'; id: RpcId; result: unknown } | { jsonrpc: '2.0'; id: RpcId; error: ReturnType<typeof toA2aRpc> };
export type A2aAnswer = { kind: 'json'; body: RpcResponse } | { kind: 'stream'; events: AsyncIterable<RpcResponse> };

const requestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z.string(),
  params: z.unknown().optional(),
});
/** `returnImmediately` (v1.0) or `blocking: false` (0.3): answer with the task as soon as it is started. */
const sendParams = z.looseObject({
  message: incomingMessageSchema,
  configuration: z
    .looseObject({
      historyLength: z.number().int().optional(),
      returnImmediately: z.boolean().optional(),
      blocking: z.boolean().optional(),
    })
    .optional(),
});
const idParams = z.looseObject({ id: taskIdSchema, historyLength: z.number().int().optional() });
const listParams = z.looseObject({
  contextId: z.union([z.literal(''), sessionIdSchema]).optional(),
  status: z.string().optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: z.string().max(2048).optional(),
  historyLength: z.number().int().optional(),
});
const approveSchema = z.looseObject({
  approve: z.boolean(),
  callId: z.string().optional(),
  reason: z.string().max(2000).optional(),
});
const questionAnswerSchema = z.looseObject({
  elicitationId: z.string().optional(),
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.unknown().optional(),
});

const METHODS: Record<A2aVersion, Record<string, Method>> = {
  '1.0': {
    SendMessage: 'send',
    SendStreamingMessage: 'stream',
    GetTask: 'get',
    ListTasks: 'list',
    CancelTask: 'cancel',
    SubscribeToTask: 'subscribe',
    GetExtendedAgentCard: 'card',
    CreateTaskPushNotificationConfig: 'push',
    GetTaskPushNotificationConfig: 'push',
    ListTaskPushNotificationConfigs: 'push',
    DeleteTaskPushNotificationConfig: 'push',
  },
  '0.3': {
    'message/send': 'send',
    'message/stream': 'stream',
    'tasks/get': 'get',
    'tasks/cancel': 'cancel',
    'tasks/resubscribe': 'subscribe',
    'agent/getAuthenticatedExtendedCard': 'card',
    'tasks/pushNotificationConfig/set': 'push',
    'tasks/pushNotificationConfig/get': 'push',
    'tasks/pushNotificationConfig/list': 'push',
    'tasks/pushNotificationConfig/delete': 'push',
  },
};
type Method = 'send' | 'stream' | 'get' | 'list' | 'cancel' | 'subscribe' | 'card' | 'push';

const parse = <T extends z.ZodType>(schema: T, value: unknown): z.output<T> => {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new AppError(
      'MISSING_FIELD',
      `Invalid params: ${r.error.issues[0]?.path.join('.') || 'params'}: ${r.error.issues[0]?.message ?? 'invalid'}`,
    );
  return r.data;
};
const taskNotFound = (id: string) => new AppError('TASK_NOT_FOUND', `No task "${id}"`, { taskId: id });

export function createA2aFace(deps: A2aFaceDeps) {
  const { follower } = deps;

  /** The stored task `id` of the caller's, or TASK_NOT_FOUND. */
  async function readTask(id: string, sessions: SessionAccess): Promise<{ view: TaskView; key: SessionKey }> {
    const ref = parseTaskId(id);
    if (!ref) throw taskNotFound(id);
    const key = sessions.key(ref.contextId);
    const view = taskView(ref.contextId, ref.turnId, await follower.steps(key, ref.turnId));
    if (!view) throw taskNotFound(id);
    return { view, key };
  }

  /**
   * Starts (or answers) a turn and watches it: `onChange` sees every step. `settled` resolves once the
   * task is final or waits for input (not counting the approvals this very message answered).
   */
  async function start(
    params: z.output<typeof sendParams>,
    ctx: A2aCallContext,
    onChange: (prev: TaskView | undefined, next: TaskView) => void,
  ) {
    const msg = params.message;
    const { text, data, other } = readMessage(msg);
    if (other > 0) throw new AppError('CONTENT_TYPE_NOT_SUPPORTED', 'Only text and data parts are accepted');
    const hops = hopsOf(msg.metadata);
    if (hops > deps.maxHops)
      throw new AppError(
        'FORBIDDEN',
        `Refused: this call has passed through ${hops} agents; the limit is ${deps.maxHops} (server.mcp.maxHops)`,
        { reason: 'hops', hops },
      );
    const ref = msg.taskId === undefined ? undefined : parseTaskId(msg.taskId);
    if (msg.taskId !== undefined && !ref) throw taskNotFound(msg.taskId);
    const contextId = ref?.contextId ?? msg.contextId ?? deps.ids();
    const key = ctx.sessions.key(contextId);
    let answered = new Set<string>();
    let turnId = ref?.turnId ?? '';
    let resolveSettled!: () => void;
    const settled = new Promise<void>((r) => (resolveSettled = r));
    // Armed once this message took effect: a task that waited for the approvals it answers is not settled yet.
    let armed = ref === undefined;
    const check = (view: TaskView | undefined) => {
      const fresh = view !== undefined && view.questions.some((q) => !answered.has(q.id));
      if (armed && view && (FINAL_STATES.has(view.state) || (view.state === 'input-required' && fresh)))
        resolveSettled();
    };
    const watch = followTask(follower, key, contextId, (prev, next) => {
      onChange(prev, next);
      check(next);
    });
    try {
      if (ref) {
        const current = await watch.follow(ref.turnId);
        if (!current) throw taskNotFound(msg.taskId ?? '');
        answered = await answerInput(current, data, key, ctx);
        armed = true;
        check(watch.view);
      } else {
        if (text.trim() === '') throw new AppError('MISSING_FIELD', 'The message has no text part');
        const sent = await deps.bus.execute(
          'agent.sendMessage',
          { sessionId: key, content: text, hops, ...(ctx.sessions.quota && { quota: ctx.sessions.quota }) },
          { sessionId: key, correlationId: deps.ids() },
        );
        await watch.follow(sent.turnId);
        turnId = sent.turnId;
      }
    } catch (err) {
      watch.close();
      throw err;
    }
    return { watch, settled, taskId: taskIdOf(contextId, turnId) };
  }

  /** Answers what an input-required task waits for: its approvals, or one tool server's question. Returns the ids answered. */
  async function answerInput(
    task: TaskView,
    data: unknown[],
    key: SessionKey,
    ctx: A2aCallContext,
  ): Promise<Set<string>> {
    if (FINAL_STATES.has(task.state))
      throw new AppError(
        'UNSUPPORTED_OPERATION',
        `Task "${task.id}" is ${task.state}: send a new message without taskId`,
        { taskId: task.id, state: task.state },
      );
    const reply = data.map((d) => questionAnswerSchema.safeParse(d)).find((r) => r.success)?.data;
    if (task.state === 'input-required' && reply) return answerQuestion(task, reply, key, ctx);
    const answer = data.map((d) => approveSchema.safeParse(d)).find((r) => r.success)?.data;
    if (task.state !== 'input-required' || !answer)
      throw new AppError(
        'INVALID_REQUEST',
        'A message on a running task must answer what it waits for with a data part: { "approve": true | false, "callId"? } or { "elicitationId"?, "action": "accept" | "decline" | "cancel", "content"? }',
        { taskId: task.id, state: task.state },
      );
    if (!deps.mayApprove(ctx.principal))
      throw new AppError('FORBIDDEN', 'Answering an approval needs the approve scope', { scope: 'approve' });
    const calls = task.questions.filter(
      (q) => inFamily('approval')(q) && (answer.callId === undefined || q.id === answer.callId),
    );
    if (calls.length === 0)
      throw new AppError(
        'APPROVAL_NOT_FOUND',
        `No call "${answer.callId ?? ''}" waits for approval in task "${task.id}"`,
      );
    const decision = {
      decision: answer.approve ? ('approve' as const) : ('deny' as const),
      ...(answer.reason !== undefined && { reason: answer.reason }),
    };
    for (const c of calls)
      await deps.bus.execute(
        'agent.answer',
        { sessionId: key, id: c.id, answer: decision, by: 'a2a' },
        { sessionId: key },
      );
    return new Set(calls.map((c) => c.id));
  }

  async function answerQuestion(
    task: TaskView,
    reply: z.output<typeof questionAnswerSchema>,
    key: SessionKey,
    ctx: A2aCallContext,
  ): Promise<Set<string>> {
    if (!deps.mayApprove(ctx.principal))
      throw new AppError('FORBIDDEN', "Answering a tool server's question needs the approve scope", {
        scope: 'approve',
      });
    const questions = task.questions.filter(
      (q) => inFamily('elicitation')(q) && (reply.elicitationId === undefined || q.id === reply.elicitationId),
    );
    const [question] = questions;
    if (!question)
      throw new AppError(
        'ELICITATION_NOT_FOUND',
        `No question "${reply.elicitationId ?? ''}" waits for an answer in task "${task.id}"`,
      );
    if (questions.length > 1)
      throw new AppError(
        'INVALID_REQUEST',
        `Task "${task.id}" waits for ${questions.length} questions: name one with "elicitationId"`,
        { taskId: task.id },
      );
    const { action, content } = reply;
    await deps.bus.execute(
      'agent.answer',
      { sessionId: key, id: question.id, answer: { action, ...(content !== undefined && { content }) }, by: 'a2a' },
      { sessionId: key },
    );
    return new Set([question.id]);
  }

  /** Resolves after `ms`, or when `signal` aborts; the timer never holds the process. */
  const pause = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });

  async function send(params: unknown, ctx: A2aCallContext) {
    const p = parse(sendParams, params);
    const { watch, settled, taskId } = await start(p, ctx, () => undefined);
    try {
      const { returnImmediately, blocking } = p.configuration ?? {};
      if (returnImmediately !== true && blocking !== false)
        await Promise.race([settled, pause(deps.waitMs, ctx.signal)]);
      // The message is stored before it is acknowledged (queued behind a running turn, or its turn started).
      if (!watch.view)
        throw new AppError('INTERNAL_ERROR', `Task "${taskId}" was acknowledged but is not in its session's log`);
      return wrap('task', encodeTask(watch.view, ctx.version, p.configuration?.historyLength), ctx.version);
    } finally {
      watch.close();
    }
  }

  /** A stream of results from a watch: the task first, then its steps, ending on a final state or when the client leaves. */
  function streamOf(
    id: RpcId,
    ctx: A2aCallContext,
    open: (onChange: (prev: TaskView | undefined, next: TaskView) => void) => Promise<{ close(): void }>,
  ): Promise<AsyncIterable<RpcResponse>> {
    return pipeEvents<RpcResponse>(ctx.signal, async (push, end) => {
      const result = (value: unknown): RpcResponse => ({ jsonrpc: '2.0', id, result: value });
      const watch = await open((prev, next) => {
        if (!prev) push(result(wrap('task', encodeTask(next, ctx.version), ctx.version)));
        else for (const e of streamEvents(prev, next, ctx.version)) push(result(e));
        if (FINAL_STATES.has(next.state)) end();
      });
      return () => watch.close();
    });
  }

  async function list(params: unknown, ctx: A2aCallContext) {
    const p = parse(listParams, params ?? {});
    const status = p.status === undefined || p.status === '' ? undefined : stateFromWire(p.status);
    const only = p.contextId === undefined || p.contextId === '' ? undefined : ctx.sessions.key(p.contextId);
    const size = p.pageSize ?? 50;
    const { tasks, nextPageToken, totalSize } = await listTasks(follower, ctx.sessions, {
      only,
      status,
      pageSize: size,
      pageToken: p.pageToken ?? '',
    });
    return {
      tasks: tasks.map((t) => encodeTask(t, ctx.version, p.historyLength)),
      nextPageToken,
      pageSize: size,
      totalSize,
    };
  }

  async function cancel(params: unknown, ctx: A2aCallContext) {
    const p = parse(idParams, params);
    const { view, key } = await readTask(p.id, ctx.sessions);
    if (FINAL_STATES.has(view.state))
      throw new AppError('TASK_NOT_CANCELABLE', `Task "${p.id}" is ${view.state}`, { taskId: p.id, state: view.state });
    const ref = parseTaskId(p.id)!;
    let done!: () => void;
    const ended = new Promise<void>((r) => (done = r));
    const watch = followTask(follower, key, ref.contextId, (_prev, next) => FINAL_STATES.has(next.state) && done());
    try {
      await watch.follow(ref.turnId);
      if (!watch.view || !FINAL_STATES.has(watch.view.state)) {
        await deps.bus.execute('agent.cancel', { sessionId: key }, { sessionId: key });
        await Promise.race([ended, pause(deps.waitMs, ctx.signal)]);
      }
      return encodeTask(watch.view ?? view, ctx.version);
    } finally {
      watch.close();
    }
  }

  async function dispatch(method: Method, id: RpcId, params: unknown, ctx: A2aCallContext): Promise<A2aAnswer> {
    const json = (result: unknown): A2aAnswer => ({ kind: 'json', body: { jsonrpc: '2.0', id, result } });
    switch (method) {
      case 'send':
        return json(await send(params, ctx));
      case 'get': {
        const p = parse(idParams, params);
        return json(encodeTask((await readTask(p.id, ctx.sessions)).view, ctx.version, p.historyLength));
      }
      case 'list':
        if (ctx.version !== '1.0')
          throw new AppError('UNSUPPORTED_OPERATION', 'ListTasks is a v1.0 method (send A2A-Version: 1.0)');
        return json(await list(params, ctx));
      case 'cancel':
        return json(await cancel(params, ctx));
      case 'card':
        return json(deps.card(ctx.origin));
      case 'push':
        throw new AppError('PUSH_NOTIFICATION_NOT_SUPPORTED', 'Push notifications are not supported');
      case 'stream': {
        const p = parse(sendParams, params);
        const events = await streamOf(id, ctx, async (onChange) => (await start(p, ctx, onChange)).watch);
        return { kind: 'stream', events };
      }
      case 'subscribe': {
        const p = parse(idParams, params);
        const { view } = await readTask(p.id, ctx.sessions);
        if (FINAL_STATES.has(view.state))
          throw new AppError('UNSUPPORTED_OPERATION', `Task "${p.id}" is ${view.state}: nothing to subscribe to`, {
            taskId: p.id,
            state: view.state,
          });
        return { kind: 'stream', events: await subscribe(id, p.id, ctx) };
      }
    }
  }

  function subscribe(id: RpcId, taskId: string, ctx: A2aCallContext): Promise<AsyncIterable<RpcResponse>> {
    const ref = parseTaskId(taskId)!;
    const key = ctx.sessions.key(ref.contextId);
    return streamOf(id, ctx, async (onChange) => {
      const watch = followTask(follower, key, ref.contextId, onChange);
      await watch.follow(ref.turnId);
      return watch;
    });
  }

  return {
    async handle(request: unknown, ctx: A2aCallContext): Promise<A2aAnswer> {
      const r = requestSchema.safeParse(request);
      const id: RpcId = r.success ? (r.data.id ?? null) : null;
      try {
        if (!r.success) throw new AppError('INVALID_REQUEST', 'Not a JSON-RPC 2.0 request');
        const method = METHODS[ctx.version][r.data.method];
        if (!method)
          return {
            kind: 'json',
            body: {
              jsonrpc: '2.0',
              id,
              error: {
                code: -32601,
                message: `Method not found: ${r.data.method} (A2A ${ctx.version})`,
                data: { code: 'INVALID_REQUEST' },
              },
            },
          };
        return await dispatch(method, id, r.data.params, ctx);
      } catch (err) {
        return { kind: 'json', body: { jsonrpc: '2.0', id, error: toA2aRpc(err) } };
      }
    },
  };
}
export type A2aFace = ReturnType<typeof createA2aFace>;
