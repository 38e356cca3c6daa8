/**
 * A2A's JSON-RPC binding, v1.0 and v0.3 (docs/a2a.md). A task IS a turn of the event log (task-view.ts), so any
 * instance answers from the log, with the ownership, quotas and hop limits of every other face (hence not the
 * SDK's `DefaultRequestHandler`, which owns the task lifecycle). Every context id goes through
 * `ctx.sessions.key`: another principal's task is TaskNotFound. Errors are encoded by `toA2aRpc` (src/errors).
 */
import { pipeEvents } from '../agent/index.ts';
import { AppError, toA2aRpc } from '../errors/index.ts';
import type { A2aAnswer, A2aCallContext, A2aFaceDeps, A2aResults, RpcId, RpcResult } from './face-types.ts';
import { listTaskPage } from './list-params.ts';
import { parseParams as parse } from './params.ts';
import { idParams, methodOf, requestSchema, sendParams, type Method } from './rpc-methods.ts';
import { createPushMethods } from './push-methods.ts';
import { createMessageSender } from './send-message.ts';
import { FINAL_STATES, type TaskView } from './task-view.ts';
import { followTask, pause, readTask } from './tasks.ts';
import { encodeTask, streamEvents, wrap } from './wire.ts';

export function createA2aFace(deps: A2aFaceDeps) {
  const { follower } = deps;
  const { start, send } = createMessageSender(deps);
  const pushCall = createPushMethods(deps);

  /**
   * The task as it stands once `open` resolved (`opening`: A2A v1.0 §3.1.6, no replay of the steps that led there),
   * then each change after it, until a final state or the client leaves.
   */
  function streamOf(
    id: RpcId,
    ctx: A2aCallContext,
    open: (
      onChange: (next: TaskView) => void,
    ) => Promise<{ watch: { close(): void }; opening: () => TaskView | undefined }>,
  ): Promise<AsyncIterable<RpcResult>> {
    return pipeEvents<RpcResult>(ctx.signal, async (push, end) => {
      const result = (value: unknown): RpcResult => ({ jsonrpc: '2.0', id, result: value });
      let shown: TaskView | undefined;
      let opened = false;
      const show = (next: TaskView) => {
        if (!shown) push(result(wrap('task', encodeTask(next, ctx.version), ctx.version)));
        else for (const e of streamEvents(shown, next, ctx.version)) push(result(e));
        shown = next;
        if (FINAL_STATES.has(next.state)) end();
      };
      const { watch, opening } = await open((next) => opened && show(next));
      opened = true;
      const first = opening();
      if (first) show(first);
      return () => watch.close();
    });
  }

  async function cancel(params: unknown, ctx: A2aCallContext) {
    const p = parse(idParams, params);
    const { view, key } = await readTask(follower, p.id, ctx.sessions);
    if (FINAL_STATES.has(view.state))
      throw new AppError('TASK_NOT_CANCELABLE', `Task "${p.id}" is ${view.state}`, { taskId: p.id, state: view.state });
    let done!: () => void;
    const ended = new Promise<void>((r) => (done = r));
    const watch = followTask(follower, key, view.contextId, (_prev, next) => FINAL_STATES.has(next.state) && done());
    try {
      await watch.follow(view.turnId);
      if (!watch.view || !FINAL_STATES.has(watch.view.state)) {
        await deps.bus.execute('agent.cancel', { sessionId: key });
        await Promise.race([ended, pause(deps.waitMs, ctx.signal)]);
      }
      return encodeTask(watch.view ?? view, ctx.version);
    } finally {
      watch.close();
    }
  }

  async function dispatch(method: Method, id: RpcId, params: unknown, ctx: A2aCallContext): Promise<A2aResults> {
    const json = (result: unknown): A2aResults => ({ kind: 'json', body: { jsonrpc: '2.0', id, result } });
    switch (method) {
      case 'send':
        return json(await send(params, ctx));
      case 'get': {
        const p = parse(idParams, params);
        return json(encodeTask((await readTask(follower, p.id, ctx.sessions)).view, ctx.version, p.historyLength));
      }
      case 'list':
        if (ctx.version !== '1.0')
          throw new AppError('UNSUPPORTED_OPERATION', 'ListTasks is a v1.0 method (send A2A-Version: 1.0)');
        return json(await listTaskPage(follower, ctx.sessions, ctx.version, params));
      case 'cancel':
        return json(await cancel(params, ctx));
      case 'card':
        return json(deps.card(ctx.origin));
      case 'pushSet':
      case 'pushGet':
      case 'pushList':
      case 'pushDelete':
        return json(await pushCall(method, params, ctx));
      case 'stream': {
        const p = parse(sendParams, params);
        const events = await streamOf(id, ctx, (onChange) => start(p, ctx, (_prev, next) => onChange(next)));
        return { kind: 'stream', events };
      }
      case 'subscribe': {
        const p = parse(idParams, params);
        const { view, key } = await readTask(follower, p.id, ctx.sessions);
        if (FINAL_STATES.has(view.state))
          throw new AppError('UNSUPPORTED_OPERATION', `Task "${p.id}" is ${view.state}: nothing to subscribe to`, {
            taskId: p.id,
            state: view.state,
          });
        const events = await streamOf(id, ctx, async (onChange) => {
          const watch = followTask(follower, key, view.contextId, (_prev, next) => onChange(next));
          await watch.follow(view.turnId);
          return { watch, opening: () => watch.view };
        });
        return { kind: 'stream', events };
      }
    }
  }

  return {
    /** A method by its name at `ctx.version` (another binding's call); refusals are thrown AppErrors. */
    invoke(name: string, params: unknown, ctx: A2aCallContext): Promise<A2aResults> {
      const method = methodOf(ctx.version, name);
      if (!method) throw new AppError('INVALID_REQUEST', `Method not found: ${name} (A2A ${ctx.version})`);
      return dispatch(method, 0, params, ctx);
    },
    async handle(request: unknown, ctx: A2aCallContext): Promise<A2aAnswer> {
      const r = requestSchema.safeParse(request);
      const id: RpcId = r.success ? (r.data.id ?? null) : null;
      try {
        if (!r.success) throw new AppError('INVALID_REQUEST', 'Not a JSON-RPC 2.0 request');
        const method = methodOf(ctx.version, r.data.method);
        if (!method) {
          const missing = new AppError('INVALID_REQUEST', `Method not found: ${r.data.method} (A2A ${ctx.version})`);
          return {
            kind: 'json',
            body: { jsonrpc: '2.0', id, error: { ...toA2aRpc(missing, ctx.version), code: -32601 } },
          };
        }
        return await dispatch(method, id, r.data.params, ctx);
      } catch (err) {
        return { kind: 'json', body: { jsonrpc: '2.0', id, error: toA2aRpc(err, ctx.version) } };
      }
    },
  };
}
export type A2aFace = ReturnType<typeof createA2aFace>;
