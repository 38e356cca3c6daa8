/**
 * `questions`: what a session waits for a person on (tool approvals, elicitations, calls of tools the client runs,
 * sampling approvals), each once, with an `answer` method: those waiting now, then each new one as its `…Requested`
 * frame arrives (the list is read again then, so every kind of question, a later one too, comes the same way).
 * `serveClientTools` answers the calls of tools the client runs with the handlers it is given.
 */
import type { Api, RouteAnswer, RouteArgs } from './api.ts';
import { AgentdError, inputError } from './errors.ts';
import { followFrames, type StreamContext } from './follow.ts';
import type { CallOptions } from './http.ts';

type Question = RouteAnswer<'listQuestions'>['questions'][number];
export type QuestionReply = RouteArgs<'answerQuestion'>['body'];

export interface WaitingQuestion extends Question {
  /** Answers it with the body its kind takes: `{ decision }`, `{ action, content? }`, `{ content, error? }`. */
  answer(reply: QuestionReply, options?: CallOptions): Promise<RouteAnswer<'answerQuestion'>>;
}

export interface QuestionsOptions {
  signal?: AbortSignal;
  owner?: string;
}

/** A session with no log yet waits on nothing. */
function noSessionYet(err: unknown): { questions: Question[] } {
  if (err instanceof AgentdError && err.code === 'SESSION_NOT_FOUND') return { questions: [] };
  throw err;
}

export async function* questions(
  ctx: StreamContext & { api: Api },
  sessionId: string,
  options: QuestionsOptions = {},
): AsyncGenerator<WaitingQuestion> {
  const { api } = ctx;
  const owner = options.owner === undefined ? {} : { query: { owner: options.owner } };
  const seen = new Set<string>();
  const fresh = async function* () {
    const { questions: list } = await api
      .listQuestions({ sessionId, ...owner }, { ...(options.signal && { signal: options.signal }) })
      .catch(noSessionYet);
    for (const q of list) {
      if (seen.has(q.id)) continue;
      seen.add(q.id);
      yield {
        ...q,
        answer: (reply: QuestionReply, callOptions?: CallOptions) =>
          api.answerQuestion({ sessionId, id: q.id, body: reply, ...owner }, callOptions),
      };
    }
  };
  // The list is read each time a subscription is in place (`subscribed`: the first, each after a reconnect), so no
  // question falls between reading it and hearing of the next.
  const follow = {
    ...(options.signal && { signal: options.signal }),
    ...(options.owner !== undefined && { owner: options.owner }),
  };
  const subscribed = { event: 'subscribed', data: { sessionId } };
  for await (const frame of followFrames(ctx, sessionId, follow, { onReady: () => subscribed }))
    if (frame === subscribed || frame.event.endsWith('Requested')) yield* fresh();
}

/** A tool the client runs: its arguments in, its result as text out (a throw is the call's error). */
export type ClientToolHandler = (args: unknown) => string | Promise<string>;

export async function serveClientTools(
  waiting: AsyncIterable<WaitingQuestion>,
  handlers: Record<string, ClientToolHandler>,
): Promise<void> {
  if (typeof handlers !== 'object' || handlers === null)
    throw inputError('serveClientTools: handlers must be an object');
  for await (const q of waiting) {
    const handler = q.kind === 'clientTool' && q.toolName !== undefined ? handlers[q.toolName] : undefined;
    if (!handler) continue;
    try {
      await q.answer({ content: await handler(q.args) });
    } catch (err) {
      await q.answer({ content: '', error: err instanceof Error ? err.message : String(err) });
    }
  }
}
