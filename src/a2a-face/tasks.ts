/**
 * Reading tasks: one followed (its stored steps, then live ones; the session is watched at once, before the
 * caller sends anything), one read as it stands (another principal's, or none: TASK_NOT_FOUND), or a page
 * listed from the store's turn indexes (order, `pageToken`, `totalSize`: docs/a2a.md, "ListTasks").
 */
import { z } from 'zod';
import type { TurnFollower } from '../agent/index.ts';
import type { SessionAccess } from '../auth/index.ts';
import { AppError } from '../errors/index.ts';
import { sessionIdOf } from '../session-id.ts';
import { foldStep, parseTaskId, taskView, type TaskView } from './task-view.ts';

/** `onChange(prev, next)` on every change of the view, `prev` undefined the first time. */
export function followTask(
  follower: TurnFollower,
  sessionKey: string,
  contextId: string,
  onChange: (prev: TaskView | undefined, next: TaskView) => void,
) {
  const watch = follower.watch(sessionKey);
  let view: TaskView | undefined;
  return {
    get view() {
      return view;
    },
    /** Names the turn and folds its steps; resolves with the view (undefined: no such task). */
    async follow(turnId: string) {
      await watch.follow(turnId, (step) => {
        const next = foldStep(view, step, contextId, turnId);
        if (!next || next === view) return;
        const prev = view;
        view = next;
        onChange(prev, next);
      });
      return view;
    },
    close: () => watch.close(),
  };
}

export const taskNotFound = (id: string) => new AppError('TASK_NOT_FOUND', `No task "${id}"`, { taskId: id });
export const finished = (task: TaskView) =>
  new AppError('UNSUPPORTED_OPERATION', `Task "${task.id}" is ${task.state}: send a new message without taskId`, {
    taskId: task.id,
    state: task.state,
  });

/** The stored task `id` of the caller's, or TASK_NOT_FOUND. */
export async function readTask(follower: TurnFollower, id: string, sessions: SessionAccess) {
  const ref = parseTaskId(id);
  if (!ref) throw taskNotFound(id);
  const key = sessions.key(ref.contextId);
  const view = taskView(ref.contextId, ref.turnId, await follower.steps(key, ref.turnId));
  if (!view) throw taskNotFound(id);
  return { view, key };
}

/** Resolves after `ms`, or when `signal` aborts; the timer never holds the process. */
export const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref();
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** With a filter, pages of turns read at most per call before a short page is answered. */
const PAGES_PER_CALL = 5;

/** Where a page stopped: the session and the first seq of the last turn read, and the tasks answered before. */
const tokenSchema = z.tuple([z.string().min(1), z.number().int().nonnegative(), z.number().int().nonnegative()]);
type Position = { sessionId: string; after: number; before: number };

const encodeToken = (p: Position): string =>
  Buffer.from(JSON.stringify([p.sessionId, p.after, p.before])).toString('base64url');

function decodeToken(token: string, sessions: SessionAccess, only: string | undefined): Position | undefined {
  if (token === '') return undefined;
  let parsed: z.output<typeof tokenSchema> | undefined;
  try {
    parsed = tokenSchema.safeParse(JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))).data;
  } catch {
    parsed = undefined;
  }
  if (!parsed || !sessions.sees(parsed[0]) || (only !== undefined && parsed[0] !== only)) {
    throw new AppError('MISSING_FIELD', 'Invalid params: pageToken: not a token this agent gave for this listing');
  }
  return { sessionId: parsed[0], after: parsed[1], before: parsed[2] };
}

interface ListQuery {
  /** The key of the one context asked for. */
  only: string | undefined;
  /** Which tasks the page answers (ListTasks' filters); `undefined`: every task. */
  keep: ((view: TaskView) => boolean) | undefined;
  pageSize: number;
  pageToken: string;
}

export async function listTasks(follower: TurnFollower, sessions: SessionAccess, query: ListQuery) {
  const { only, keep, pageSize } = query;
  const start = decodeToken(query.pageToken, sessions, only);
  let from = start && { sessionId: start.sessionId, after: start.after };
  const tasks: TaskView[] = [];
  let more = false;
  for (let round = 0; round < PAGES_PER_CALL && tasks.length < pageSize; round++) {
    const page = await follower.turnPage({ range: sessions.listed, only, from, limit: pageSize - tasks.length });
    const views = await Promise.all(
      page.turns.map(async (t) =>
        taskView(sessionIdOf(t.sessionId), t.turnId, await follower.steps(t.sessionId, t.turnId)),
      ),
    );
    for (const view of views) if (view && (keep === undefined || keep(view))) tasks.push(view);
    const last = page.turns.at(-1);
    if (last) from = { sessionId: last.sessionId, after: last.firstSeq };
    more = page.more;
    if (!more || keep === undefined) break;
  }
  const before = start?.before ?? 0;
  const nextPageToken = more && from ? encodeToken({ ...from, before: before + tasks.length }) : '';
  const counted =
    only !== undefined && keep === undefined ? await follower.turnCount(only) : before + tasks.length + (more ? 1 : 0);
  return { tasks, nextPageToken, totalSize: counted };
}
