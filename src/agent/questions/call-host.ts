/**
 * What a session offers the server of one of its turn's calls while it runs: its questions, asked through the session
 * (asked.ts), and sampling with the agent's model. The tokens a sampling request spent count in the turn's budget at
 * once, and in the session's usage once recorded (`serverSampled`). A task the server creates for the call is
 * recorded (`toolTask`), so a resumed turn can poll it instead of calling the tool again.
 */
import type { SessionEvent } from '../../conversation/session-events.ts';
import { EVENT_VERSION } from '../../conversation/session-events.ts';
import type { Elicitor } from '../../tools/messages.ts';
import type { RemoteTask } from '../../tools/messages.ts';
import type { Budget } from '../compaction/budget.ts';
import type { UsageView } from '../compaction/context.ts';
import type { SamplingHost } from './sampling.ts';
import { approveSampling, elicitOf, type Asked } from './asked.ts';

export interface CallHost {
  elicit: Elicitor;
  sampling: SamplingHost;
  taskCreated: (task: RemoteTask) => void;
  /** Whether a tool's output was in the model's context when it made this call (any turn's; not one of `own`). */
  afterToolOutput: (own: ReadonlySet<string>) => Promise<boolean>;
}

export interface CallHostDeps {
  asked: Asked;
  budget: Budget;
  usage: Pick<UsageView, 'current'>;
  /** The model that answers the servers' sampling requests. */
  model: string;
  /** Stores a fact of a running call: a sampling request's usage, a task created for the call. */
  recordFact: (event: SessionEvent & { type: 'serverSampled' | 'toolTask' }) => void;
  /** Whether the model's context holds a tool's output, but those of `own` (CallHost `afterToolOutput`). */
  afterToolOutput: (own: ReadonlySet<string>) => Promise<boolean>;
}

export const callHosts =
  (deps: CallHostDeps) =>
  (call: { turnId: string; callId: string }): CallHost => ({
    elicit: (ask, options) => elicitOf(deps.asked, ask, call, options),
    sampling: {
      approve: (request, options) => approveSampling(deps.asked, request, call, options),
      checkBudget: (estimate) => deps.budget.check(call.turnId, deps.usage.current().totalTokens, estimate),
      spent(serverId, usage) {
        deps.budget.spent(call.turnId, usage);
        deps.recordFact({ v: EVENT_VERSION, type: 'serverSampled', ...call, serverId, model: deps.model, usage });
      },
    },
    taskCreated: (task) => deps.recordFact({ v: EVENT_VERSION, type: 'toolTask', ...call, ...task }),
    afterToolOutput: (own) => deps.afterToolOutput(own),
  });
