/**
 * The connection of one MCP tool server.
 *
 *   connecting ──done──▶ connected ──CONNECTION_LOST──▶ error.backoff ──after(delay)──▶ connecting
 *        └──failed──▶ error.backoff                          (or error.halted when the retry budget is spent)
 *   error.halted stays until RESTART; STOP from anywhere ends in `disconnected` (final).
 *
 * Contracts:
 * - Every state entry emits `{ type: 'status' }` with the spec status (`connecting`, `connected`, `error`,
 *   `disconnected`) and, for `error`, the reason. The owning service forwards these to the bus.
 * - The `connect` actor opens the connection (supplied with `.provide()`); it receives an abort signal when the
 *   attempt is abandoned (STOP during connecting). `closeConnection` runs whenever `connected` is left.
 * - Retry delays grow as baseDelayMs·2^attempt up to maxDelayMs, each scaled by a jitter factor in
 *   [1 − jitterRatio, 1 + jitterRatio] from the injected `random`, and never above maxDelayMs.
 * - When `maxFailures` failures fall within `windowMs` (measured with the injected `now`), retrying stops.
 * - An attempt that fails with an error named `AuthorizationRequired` (an OAuth sign-in is needed,
 *   src/tools/oauth/sign-in-errors.ts) goes straight to error.halted: retrying cannot help until someone signs in, and the
 *   sign-in's callback sends RESTART. So does `SignInRefused` (sign-ins are no longer offered until a restart). So does one named `SelfConnection` (the server is agentd itself,
 *   src/tools/mcp/self-connection.ts): no retry can change that.
 * - RESTART clears the retry budget; from `connected` or `error` it starts a new attempt, during `connecting` it
 *   lets the current attempt finish.
 */
import { backoffDelay } from '../src/backoff.ts';
import { assign, emit, fromPromise, setup } from 'xstate';
import type { ServerStatus } from '../src/conversation/records.ts';
import { messageOf } from '../src/errors/index.ts';

/** The spec status a state stands for (src/conversation/records.ts owns the list). */
export type { ServerStatus };

export const DEFAULT_RETRY_POLICY = {
  /** First retry delay, ms. */
  baseDelayMs: 1_000,
  /** Largest retry delay, ms. */
  maxDelayMs: 60_000,
  /** Delays are scaled by a random factor in [1 − jitterRatio, 1 + jitterRatio]. */
  jitterRatio: 0.2,
  /** This many failures within windowMs stop the retries until RESTART. */
  maxFailures: 5,
  windowMs: 120_000,
};
export type RetryPolicy = typeof DEFAULT_RETRY_POLICY;

export interface McpServerMachineInput {
  serverId: string;
  retry?: Partial<RetryPolicy>;
  /** Milliseconds since the epoch; used for the failure window. */
  now: () => number;
  /** Uniform in [0, 1); the jitter source. */
  random: () => number;
}

interface Context extends Omit<McpServerMachineInput, 'retry'> {
  retry: RetryPolicy;
  /** Retries made since the last successful connection. */
  attempt: number;
  /** Times of recent failures (pruned to the window). */
  failures: number[];
  error: string | undefined;
}

export type McpServerEvent = { type: 'CONNECTION_LOST'; reason: string } | { type: 'RESTART' } | { type: 'STOP' };

export type McpServerEmitted = { type: 'status'; status: ServerStatus; error?: string };

/** Delay before retry number `attempt` (0-based). */
export const retryDelayOf = (attempt: number, retry: RetryPolicy, random: () => number): number =>
  backoffDelay(
    attempt,
    { baseMs: retry.baseDelayMs, maxMs: retry.maxDelayMs, jitterDown: retry.jitterRatio, jitterUp: retry.jitterRatio },
    random,
  );

const recentFailures = (context: Context): number[] => {
  const now = context.now();
  return [...context.failures, now].filter((t) => now - t < context.retry.windowMs);
};

const failureReason = (event: { type: string; error?: unknown; reason?: string }): string =>
  event.type === 'CONNECTION_LOST' ? (event.reason ?? 'connection lost') : messageOf(event.error);

export const mcpServerMachine = setup({
  types: {
    context: {} as Context,
    events: {} as McpServerEvent,
    input: {} as McpServerMachineInput,
    emitted: {} as McpServerEmitted,
  },
  actors: {
    /** Opens the connection; resolves when the server is initialized. Supplied by the service. */
    connect: fromPromise<void, { serverId: string }>(() => Promise.reject(new Error('connect actor not provided'))),
  },
  actions: {
    /** Closes the current connection (and its child process); supplied by the service. */
    closeConnection: () => {},
    recordFailure: assign(({ context, event }) => ({
      failures: recentFailures(context),
      error: failureReason(event as { type: string; error?: unknown; reason?: string }),
    })),
    halt: assign(({ context }) => ({
      error: `${context.error ?? 'failed'} (stopped retrying after ${context.failures.length} failures within ${Math.round(
        context.retry.windowMs / 1000,
      )} s; restart the server to retry)`,
    })),
    markConnected: assign({ attempt: 0, error: undefined }),
    countAttempt: assign(({ context }) => ({ attempt: context.attempt + 1 })),
    resetBudget: assign({ attempt: 0, failures: [] as number[] }),
    emitStatus: emit(({ context }, params: { status: ServerStatus }) =>
      params.status === 'error' && context.error !== undefined
        ? { type: 'status' as const, status: params.status, error: context.error }
        : { type: 'status' as const, status: params.status },
    ),
  },
  guards: {
    /** True when this failure spends the retry budget. */
    budgetSpent: ({ context }) => recentFailures(context).length >= context.retry.maxFailures,
    /** Retrying cannot help: the attempt needs an OAuth sign-in, or reached agentd itself. */
    retryCannotHelp: ({ event }) => {
      const error = (event as { error?: unknown }).error;
      return (
        error instanceof Error && ['AuthorizationRequired', 'SignInRefused', 'SelfConnection'].includes(error.name)
      );
    },
  },
  delays: {
    retryDelay: ({ context }) => retryDelayOf(context.attempt, context.retry, context.random),
  },
}).createMachine({
  id: 'mcpServer',
  context: ({ input }) => ({
    serverId: input.serverId,
    retry: { ...DEFAULT_RETRY_POLICY, ...input.retry },
    now: input.now,
    random: input.random,
    attempt: 0,
    failures: [],
    error: undefined,
  }),
  initial: 'connecting',
  on: { STOP: '.disconnected' },
  states: {
    connecting: {
      entry: { type: 'emitStatus', params: { status: 'connecting' } },
      invoke: {
        src: 'connect',
        input: ({ context }) => ({ serverId: context.serverId }),
        onDone: { target: 'connected', actions: 'markConnected' },
        onError: [
          { guard: 'retryCannotHelp', target: 'error.halted', actions: 'recordFailure' },
          { guard: 'budgetSpent', target: 'error.halted', actions: ['recordFailure', 'halt'] },
          { target: 'error.backoff', actions: 'recordFailure' },
        ],
      },
      on: { RESTART: { actions: 'resetBudget' } },
    },
    connected: {
      entry: { type: 'emitStatus', params: { status: 'connected' } },
      exit: 'closeConnection',
      on: {
        CONNECTION_LOST: [
          { guard: 'budgetSpent', target: 'error.halted', actions: ['recordFailure', 'halt'] },
          { target: 'error.backoff', actions: 'recordFailure' },
        ],
        RESTART: { target: 'connecting', actions: 'resetBudget' },
      },
    },
    error: {
      entry: { type: 'emitStatus', params: { status: 'error' } },
      on: { RESTART: { target: 'connecting', actions: 'resetBudget' } },
      initial: 'backoff',
      states: {
        backoff: {
          after: { retryDelay: { target: '#mcpServer.connecting', actions: 'countAttempt' } },
        },
        halted: {},
      },
    },
    disconnected: {
      type: 'final',
      entry: { type: 'emitStatus', params: { status: 'disconnected' } },
    },
  },
});

export type McpServerMachine = typeof mcpServerMachine;
