/**
 * The chaos run's load: until `stop()`, one operation every 120–400 ms, each drawn from the PRNG: a message over
 * `POST /api/message` or `message-sync` (with a `turnId` of its own, acknowledged by a 200), a WebSocket `message`
 * frame (acknowledged once its sender sees its `userMessage`), an A2A `SendMessage` with a push config (acknowledged
 * by the task it answers), an MCP `tools/call` of `chat_with_agent` run as a task (mcp.ts; acknowledged by the task
 * it answers), or a WebSocket client dropping its connection (it resumes elsewhere). Each goes to an
 * instance that is up, chosen by the PRNG. Requests still open are tracked, so `stop()` waits for them (bounded).
 */
import { call } from './http.ts';
import { sendMcp } from './mcp.ts';
import { messageText, SHAPES } from './messages.ts';
import type { Follower } from './ws-follower.ts';
import { countOperation, upInstance, type World } from './world.ts';
import { sleep } from './wait.ts';

export const OPERATIONS = { message: 3, sync: 2, ws: 2, a2a: 1, mcp: 1, drop: 1 } as const;

export interface LoadSessions {
  chat: string[];
  a2a: string[];
  mcp: string[];
}

export interface Load {
  /** Stops making operations, and waits for the requests still open (at most `waitMs`). */
  stop(waitMs: number): Promise<void>;
  /** A WebSocket frame seen by `follower` (its own messages' acknowledgements). */
  onFrame(follower: Follower, frame: { event: string; data: Record<string, unknown> }): void;
}

export function startLoad(world: World, sessions: LoadSessions, followers: Follower[]): Load {
  const prng = world.prng.fork('load');
  const route = world.prng.fork('route');
  const open = new Set<Promise<unknown>>();
  const sentOverWs = new Map<string, { sessionId: string; follower: string }>();
  let stopped = false;
  let n = 0;

  const track = (p: Promise<unknown>) => {
    open.add(p);
    void p.finally(() => open.delete(p));
  };

  const operate = (): void => {
    const kind = prng.weighted(OPERATIONS);
    const tag = `${world.seed}-${++n}`;
    const text = messageText(tag, prng.weighted(SHAPES), prng);
    const base = upInstance(world, route);
    if (kind === 'drop') {
      prng.pick(followers).drop();
    } else if (kind === 'ws') {
      const follower = prng.pick(followers);
      const sessionId = prng.pick(follower.sessions.filter((s) => sessions.chat.includes(s)));
      if (!follower.send(sessionId, text)) return;
      sentOverWs.set(text, { sessionId, follower: follower.name });
    } else if (base === undefined) {
      return;
    } else if (kind === 'a2a') {
      track(sendA2a(world, base, prng.pick(sessions.a2a), text, tag));
    } else if (kind === 'mcp') {
      track(sendMcp(world, base, prng.pick(sessions.mcp), text, tag));
    } else {
      const sessionId = prng.pick(sessions.chat);
      const turnId = `t-${tag}`;
      const path = kind === 'sync' ? '/api/message-sync' : '/api/message';
      const timeoutMs = kind === 'sync' ? 70_000 : 10_000;
      const sentAt = Date.now();
      track(
        call(base, 'POST', path, { message: text, sessionId, turnId }, { timeoutMs }).then((a) => {
          const answeredAt = Date.now();
          if (a.status === 200) world.acked.push({ sessionId, turnId, via: kind, at: answeredAt });
          if (kind === 'sync') world.syncs.push({ sessionId, turnId, sentAt, answeredAt, status: a.status });
        }),
      );
    }
    countOperation(world, kind);
  };

  const loop = (async () => {
    while (!stopped) {
      await sleep(prng.int(120, 400));
      if (!stopped) operate();
    }
  })();

  return {
    async stop(waitMs) {
      stopped = true;
      await loop;
      await Promise.race([Promise.allSettled([...open]), sleep(waitMs)]);
    },
    onFrame(follower, frame) {
      if (frame.event !== 'userMessage') return;
      const sent = sentOverWs.get(String(frame.data['content']));
      if (!sent || sent.follower !== follower.name || typeof frame.data['turnId'] !== 'string') return;
      sentOverWs.delete(String(frame.data['content']));
      world.acked.push({ sessionId: sent.sessionId, turnId: frame.data['turnId'], via: 'ws', at: Date.now() });
    },
  };
}

/** A2A v1.0 `SendMessage` on context `contextId`, answered at once, with a push config to the push receiver. */
async function sendA2a(world: World, base: string, contextId: string, text: string, tag: string): Promise<void> {
  const answer = await call(
    base,
    'POST',
    '/a2a',
    {
      jsonrpc: '2.0',
      id: tag,
      method: 'SendMessage',
      params: {
        message: { messageId: `m-${tag}`, role: 'ROLE_USER', contextId, parts: [{ text }] },
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: { url: world.pushUrl, token: `push-${world.seed}` },
        },
      },
    },
    { timeoutMs: 10_000, headers: { 'A2A-Version': '1.0' } },
  );
  const result = (answer.body as { result?: { id?: unknown; task?: { id?: unknown } } } | undefined)?.result;
  const taskId = result?.task?.id ?? result?.id;
  if (answer.status !== 200 || typeof taskId !== 'string') return;
  const turnId = taskId.slice(taskId.lastIndexOf('/') + 1);
  world.a2aTasks.push({ taskId, sessionId: contextId, turnId });
  world.acked.push({ sessionId: contextId, turnId, via: 'a2a', at: Date.now() });
}
