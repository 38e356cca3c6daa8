/**
 * Runs a compaction of one session (compaction.ts decides what): waits for the session's facts to
 * be stored, plans, asks the model for a summary when clearing tool results is not enough, and
 * stores `contextCompacted`, which the history folds in (history.ts).
 *
 * Contracts:
 * - Resolves with the stored event, or `undefined` when there was nothing to compact. Rejects with
 *   AGENT_ERROR `details.reason: "compaction_failed"` (and the cause) when the summary request
 *   failed or answered nothing: nothing is stored, so the history stays as it was. An abort
 *   rejects as itself, storing nothing.
 * - The summary request goes to `llm.compaction.model` (default: the session's model) with no
 *   tools; its usage is recorded on the event (`usage`) and in the session's totals (`usageTotal`).
 */
import { EVENT_VERSION, type SessionEventOf } from '../../conversation/session-events.ts';
import { charsOf, tokensOf } from '../../conversation/token-estimate.ts';
import type { CompactInput } from '../../conversation/turn-contract.ts';
import { AppError, messageOf } from '../../errors/index.ts';
import { planCompaction, SUMMARY_HEADING, summaryRequest } from '../compaction/compaction.ts';
import type { UsageView } from '../compaction/context.ts';
import type { SessionStoredEvent } from '../frames.ts';
import type { ModelStepDeps } from './model-step.ts';
import type { SessionOutput } from './output.ts';
import type { SessionDeps } from './types.ts';

export interface CompactorDeps
  extends
    Pick<SessionDeps, 'sessionId' | 'log' | 'llm' | 'context' | 'systemPrompt'>,
    Pick<ModelStepDeps, 'history' | 'outbox' | 'meter'> {
  usage: UsageView;
  /** Characters the tool definitions of the last request took. */
  toolChars: () => number;
  /** The seq of the oldest message still queued (its turn not started), if any. */
  queuedFrom: () => number | undefined;
  /** The apps kept with the session's tool calls (SessionState `apps`), carried by the compaction's event. */
  apps: () => ReadonlyMap<string, string> | undefined;
  /** Stores a fact of the session (its output's `record`). */
  record: SessionOutput['record'];
}

/** Characters of a transcript when no window is known: about 4 000 tokens, which any chat model takes. */
const UNKNOWN_WINDOW_TRANSCRIPT_CHARS = 16_000;

export function createCompactor(deps: CompactorDeps) {
  const { history, context, log, sessionId } = deps;
  const failed = (cause: string) =>
    new AppError('AGENT_ERROR', `The conversation could not be compacted: ${cause}`, {
      reason: 'compaction_failed',
      cause,
    });

  return async (input: CompactInput, signal: AbortSignal): Promise<SessionStoredEvent | undefined> => {
    await deps.outbox.drained();
    signal.throwIfAborted();
    const messages = history.messages();
    const chars = deps.systemPrompt.length + history.chars + deps.toolChars();
    const tokens = deps.meter.estimate(messages, chars);
    const window = context.window();
    const plan = planCompaction({
      messages,
      seqs: history.seqs(),
      lastSeq: history.lastSeq,
      keepTurns: context.keepTurns,
      minKeep: input.key ? 1 : 0,
      trigger: input.trigger,
      tokens,
      target: window === undefined ? undefined : Math.floor((context.threshold * window) / 2),
    });
    if (!plan) {
      log.debug({ sessionId, trigger: input.trigger }, 'nothing to compact');
      return undefined;
    }
    const queued = deps.queuedFrom();
    const start = plan.method === 'summary' ? plan.cut.upToSeq + 1 : history.base + 1;
    const base = {
      v: EVENT_VERSION as typeof EVENT_VERSION,
      type: 'contextCompacted' as const,
      trigger: input.trigger,
      upToSeq: plan.cut.upToSeq,
      readFrom: Math.max(1, queued === undefined ? start : Math.min(start, queued)),
      tokensBefore: tokens,
      ...(input.key && { turnId: input.key.turnId }),
      ...(deps.apps()?.size && { apps: Object.fromEntries(deps.apps()!) }),
    };
    let event: SessionEventOf<'contextCompacted'>;
    if (plan.method === 'clearToolResults') {
      event = {
        ...base,
        method: 'clearToolResults',
        tokensAfter: plan.tokensAfter,
        usageTotal: deps.usage.with(undefined),
      };
    } else {
      const room =
        window === undefined
          ? UNKNOWN_WINDOW_TRANSCRIPT_CHARS
          : Math.floor((window - context.maxOutputTokens) * 0.75 * 4) - context.prompt.length;
      const request = summaryRequest(context.prompt, messages.slice(0, plan.cut.index), Math.max(1000, room));
      const model = context.model ?? deps.llm.model;
      let text: string;
      let usage;
      try {
        const step = await deps.llm.complete({
          messages: request,
          tools: [],
          signal,
          model,
          sessionId,
          ...(input.key && { turnId: input.key.turnId }),
        });
        text = step.text.trim();
        usage = step.usage;
      } catch (err) {
        signal.throwIfAborted();
        const cause = messageOf(err);
        log.warn({ sessionId, trigger: input.trigger, cause }, 'compaction failed: the summary request failed');
        throw failed(`the summary request failed (${cause})`);
      }
      signal.throwIfAborted();
      if (text === '') {
        log.warn({ sessionId, trigger: input.trigger }, 'compaction failed: the summary was empty');
        throw failed('the model answered an empty summary');
      }
      const after = plan.tokensAfter + tokensOf(charsOf({ role: 'system', content: SUMMARY_HEADING + text }));
      event = {
        ...base,
        method: 'summary',
        summary: text,
        tokensAfter: after,
        model,
        ...(usage && { usage }),
        usageTotal: deps.usage.with(usage),
      };
    }
    const meta = input.key ?? { correlationId: input.correlationIds?.[0] ?? `compact:${sessionId}` };
    const stored = await new Promise<SessionStoredEvent>((resolve, reject) =>
      deps.record(meta, event, resolve, reject),
    );
    log.info(
      {
        sessionId,
        method: event.method,
        trigger: input.trigger,
        upToSeq: event.upToSeq,
        tokensBefore: tokens,
        tokensAfter: event.tokensAfter,
      },
      'conversation compacted',
    );
    return stored;
  };
}

export type Compactor = ReturnType<typeof createCompactor>;

/**
 * The compactions a session's callers asked for between turns (`compact`): each caller waits for the one
 * that answers it (by correlation id). `run` is the machines' `compact` actor: it answers the callers it
 * serves with the stored event (or `undefined`: nothing to compact), and a compaction asked for by name
 * that found nothing fails (AGENT_ERROR `reason: "nothing_to_compact"`); one stopped (reset, close)
 * rejects them as `cancelled`, naming `stoppedBy()`.
 */
export function createCompactRequests(compactor: Compactor, stoppedBy: () => string) {
  const waiters = new Map<
    string,
    { resolve: (stored: SessionStoredEvent | undefined) => void; reject: (err: unknown) => void }
  >();
  return {
    wait: (correlationId: string) =>
      new Promise<SessionStoredEvent | undefined>((resolve, reject) => waiters.set(correlationId, { resolve, reject })),
    run: async (input: CompactInput, signal: AbortSignal): Promise<void> => {
      const served = (input.correlationIds ?? []).flatMap((id) => {
        const w = waiters.get(id);
        waiters.delete(id);
        return w ? [w] : [];
      });
      try {
        const stored = await compactor(input, signal);
        served.forEach((w) => w.resolve(stored));
        if (!stored && input.key)
          throw new AppError('AGENT_ERROR', 'nothing to compact', { reason: 'nothing_to_compact' });
      } catch (err) {
        const why = signal.aborted
          ? new AppError('AGENT_ERROR', `The compaction was stopped (${stoppedBy()})`, { reason: 'cancelled' })
          : err;
        served.forEach((w) => w.reject(why));
        throw why;
      }
    },
    /** Every caller still waiting is refused with `err` (the session closed). */
    rejectAll(err: unknown): void {
      for (const [id, w] of waiters) {
        waiters.delete(id);
        w.reject(err);
      }
    },
  };
}
