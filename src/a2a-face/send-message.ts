/**
 * `SendMessage` and the start of `SendStreamingMessage` (docs/a2a.md, "Follow-up messages"): no `contextId`
 * starts an unnamed session; a `taskId` answers an input-required task (answer-input.ts), queues behind a
 * submitted or working one, and is refused on a finished one (-32004). `SendMessage` waits until the task is
 * final or input-required, `waitMs` passed, or the client left.
 */
import type { SessionAccess } from '../auth/index.ts';
import { AppError } from '../errors/index.ts';
import { unnamedSessionId } from '../session-id.ts';
import { hopsOf, invalidHops } from '../conversation/hops.ts';
import { createInputAnswers } from './answer-input.ts';
import type { A2aCallContext, A2aFaceDeps } from './face-types.ts';
import { contentOf } from './message-parts.ts';
import { parseParams as parse } from './params.ts';
import { keepPushConfig, messagePushConfig } from './push-methods.ts';
import { sendParams, type SendParams } from './rpc-methods.ts';
import { FINAL_STATES, taskIdOf, withAnswered, type TaskView } from './task-view.ts';
import { finished, followTask, pause, readTask, taskNotFound } from './tasks.ts';
import { encodeTask, wrap } from './wire.ts';

export function createMessageSender(deps: A2aFaceDeps) {
  const { follower } = deps;
  const answerInput = createInputAnswers(deps);

  /** Starts (or answers) a turn and watches it; `settled`: final, or waiting for input this message did not answer. */
  async function start(
    params: SendParams,
    ctx: A2aCallContext,
    onChange: (prev: TaskView | undefined, next: TaskView) => void,
  ) {
    const msg = params.message;
    const { text, data, image } = contentOf(msg.parts);
    const hops = hopsOf(msg.metadata);
    if (hops === undefined) throw new AppError('MISSING_FIELD', invalidHops('message.metadata'));
    if (hops > deps.maxHops)
      throw new AppError(
        'FORBIDDEN',
        `Refused: this call has passed through ${hops} agents; the limit is ${deps.maxHops} (server.mcp.maxHops)`,
        { reason: 'hops', hops },
      );
    const pushConfig = messagePushConfig(params.configuration, ctx.version, deps.push);
    // A message on a task answers what it waits for; on a task that waits for nothing it is the context's next message.
    const on = msg.taskId === undefined ? undefined : await taskToContinue(msg.taskId, msg.contextId, ctx.sessions);
    const ref = on?.state === 'input-required' ? on : undefined;
    const unnamed = on === undefined && msg.contextId === undefined;
    const contextId = on?.contextId ?? msg.contextId ?? unnamedSessionId(deps.ids());
    const key = ctx.sessions.key(contextId);
    let answered = new Set<string>();
    // The turn's id is made here, so a push config given with the message is kept before the turn can change.
    const turnId = ref?.turnId ?? deps.ids();
    let keptPush: string | undefined;
    const keepPush = async () => {
      if (!pushConfig || !deps.push) return;
      const task = { key, turnId, taskId: taskIdOf(contextId, turnId) };
      keptPush = (await keepPushConfig(deps.push, deps.ids, task, pushConfig, ctx.version)).id;
    };
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
        await keepPush();
        answered = await answerInput(current, data, key, ctx);
        armed = true;
        check(watch.view);
      } else {
        if (text.trim() === '' && !image) throw new AppError('MISSING_FIELD', 'The message has no text part');
        const quota = ctx.sessions.quota;
        await keepPush();
        const sent = await deps.bus.execute(
          'agent.sendMessage',
          {
            sessionId: key,
            turnId,
            content: text,
            hops,
            ...(image && { image }),
            ...(quota && { quota }),
            ...(unnamed && { unnamed: true }),
          },
          { correlationId: deps.ids() },
        );
        await watch.follow(sent.turnId);
      }
    } catch (err) {
      watch.close();
      // A config kept for a turn the message did not start is no config of any task.
      if (!ref && keptPush !== undefined) await deps.push?.delete(key, turnId, keptPush).catch(() => undefined);
      throw err;
    }
    // The task as it stands once this message took effect: what it answered no longer waits (its close may not have
    // been folded in yet).
    const opening = () => watch.view && withAnswered(watch.view, answered);
    return { watch, settled, opening, taskId: taskIdOf(contextId, turnId) };
  }

  /** The task a message names: not finished (else -32004), and of the message's `contextId` if it names one (else -32602). */
  async function taskToContinue(taskId: string, contextId: string | undefined, sessions: SessionAccess) {
    const { view } = await readTask(follower, taskId, sessions);
    if (contextId !== undefined && contextId !== view.contextId)
      throw new AppError(
        'MISSING_FIELD',
        `Invalid params: message.contextId: "${contextId}" is not the context of task "${taskId}"`,
        { field: 'message.contextId' },
      );
    if (FINAL_STATES.has(view.state)) throw finished(view);
    return view;
  }

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

  return { start, send };
}
