/**
 * Reading tasks: one followed (its stored steps, then live ones; the session is watched at once, before the
 * caller sends anything), one read as it stands (another principal's, or none: TASK_NOT_FOUND), or a page
 * listed newest first from the store's sessions and turn indexes (order, `pageToken`, `totalSize`: docs/a2a.md,
 * "ListTasks").
 */
import { z } from 'zod';
import type { TurnFollower } from '../agent/index.ts';
import type { SessionAccess } from '../auth/index.ts';
import { AppError } from '../errors/index.ts';
import { compareKeys, sessionIdOf } from '../session-id.ts';
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

/** Where a page stopped: its last task (its session's key, turn and status time) and the tasks answered before. */
const tokenSchema = z.tuple([z.string().min(1), z.string().min(1), z.string().min(1), z.number().int().nonnegative()]);
type Position = { sessionId: string; turnId: string; statusAt: string; before: number };

const encodeToken = (p: Position): string =>
  Buffer.from(JSON.stringify([p.sessionId, p.turnId, p.statusAt, p.before])).toString('base64url');

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
  return { sessionId: parsed[0], turnId: parsed[1], statusAt: parsed[2], before: parsed[3] };
}

interface ListQuery {
  /** The key of the one context asked for. */
  only: string | undefined;
  /** Which tasks the page answers (ListTasks' filters); `undefined`: every task. */
  keep: ((view: TaskView) => boolean) | undefined;
  pageSize: number;
  pageToken: string;
}

type Listed = { view: TaskView; sessionId: string };
/**
 * The listing's order: status time, newest first; then session key (code point order, as the store orders sessions
 * of one time) and turn id (a total order a token resumes).
 */
const newestFirst = (a: Omit<Position, 'before'>, b: Omit<Position, 'before'>): number =>
  a.statusAt !== b.statusAt
    ? a.statusAt < b.statusAt
      ? 1
      : -1
    : a.sessionId !== b.sessionId
      ? compareKeys(a.sessionId, b.sessionId)
      : a.turnId < b.turnId
        ? -1
        : a.turnId > b.turnId
          ? 1
          : 0;
const positionOf = (l: Listed) => ({ sessionId: l.sessionId, turnId: l.view.turnId, statusAt: l.view.statusAt });

/**
 * Whether `listed` comes before every task of `session` and of the sessions listed after it: their tasks end at or
 * before their session's `updatedAt`, and sessions of one time come by key.
 */
const precedes = (listed: Listed, session: { id: string; updatedAt: string }): boolean =>
  listed.view.statusAt > session.updatedAt ||
  (listed.view.statusAt === session.updatedAt && compareKeys(listed.sessionId, session.id) < 0);

/**
 * A page of the caller's tasks by status time, newest first (A2A v1.0 §3.1.4). Sessions are taken from the store's
 * index by update time, most recent first, and reading stops once a page's worth of tasks (and one more) comes
 * before the next session: a page costs the sessions it reads, not how many the caller has.
 * `totalSize` (a task is a turn): without filters, the store's kept turn total of the caller's sessions (exact, read
 * at once); for one `contextId` alone, that session's turns; with `status` or `statusTimestampAfter`, a lower bound
 * (the tasks up to this page's end, plus one when another page follows).
 */
export async function listTasks(follower: TurnFollower, sessions: SessionAccess, query: ListQuery) {
  const { only, keep, pageSize } = query;
  const start = decodeToken(query.pageToken, sessions, only);
  const unfiltered = keep === undefined;
  const kept = unfiltered && only === undefined ? follower.turnTotal(sessions.listedOwner) : undefined;
  kept?.catch(() => undefined); // awaited below
  const ordered = follower.sessionsByRecency(sessions.listedOwner, only);
  let found: Listed[] = [];
  try {
    for (let next = await ordered.next(); !next.done;) {
      const session = next.value;
      const views = await Promise.all(
        (await follower.turnIds(session.id)).map(async (turnId) =>
          taskView(sessionIdOf(session.id), turnId, await follower.steps(session.id, turnId)),
        ),
      );
      for (const view of views) {
        if (!view || (keep !== undefined && !keep(view))) continue;
        const listed = { view, sessionId: session.id };
        if (!start || newestFirst(positionOf(listed), start) > 0) found.push(listed);
      }
      found = found.sort((a, b) => newestFirst(positionOf(a), positionOf(b))).slice(0, pageSize + 1);
      next = await ordered.next();
      const last = found[pageSize];
      if (last && !next.done && precedes(last, next.value)) break;
    }
  } finally {
    await ordered.return(undefined);
  }
  const page = found.slice(0, pageSize);
  const more = found.length > pageSize;
  const before = start?.before ?? 0;
  const last = page.at(-1);
  const nextPageToken = more && last ? encodeToken({ ...positionOf(last), before: before + page.length }) : '';
  const counted =
    (await kept) ??
    (unfiltered && only !== undefined ? await follower.turnCount(only) : before + page.length + (more ? 1 : 0));
  return { tasks: page.map((l) => l.view), nextPageToken, totalSize: counted };
}
