/**
 * `questions`: what a session waits for a person on (tool approvals, elicitations, calls of tools the client runs,
 * sampling approvals), each once, with an `answer` method: those waiting now, then each new one as its `…Requested`
 * frame arrives (the list is read again then, so every kind of question, a later one too, comes the same way).
 * The calls of tools the client runs are answered by handlers in client-tools.ts.
 */
import type { Api, RouteAnswer, RouteArgs } from './api.ts';
import { AgentdError } from './errors.ts';
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
