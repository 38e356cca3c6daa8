/** The turn machine's actors: the tools runner, and placeholders for what its owner provides. */
import { fromCallback, fromPromise, type AnyActorRef } from 'xstate';
import type { ModelToolOutcome } from '../../src/conversation/tool-shapes.ts';
import type {
  CompactInput,
  ModelStepInput,
  ModelStepResult,
  RunToolsInput,
  StartCall,
  ToolCallInput,
  ToolCaller,
} from '../../src/conversation/turn-contract.ts';
import { failedOutcome } from '../../src/conversation/turn-steps.ts';
import { messageOf } from '../../src/errors/index.ts';

/** An actor system (xstate exports its type only through the actors'). */
export type ActorSystemOf = AnyActorRef['system'];

/**
 * The tools runner of one step: starts every call at once, and each one it is sent later
 * (`tool.start`); sends `tool.settled` back as each one settles, and aborts the calls still running
 * when it is stopped (the turn left callingTools). `callerOf` gives the caller of the actor's system
 * (one definition can serve many sessions, each its own system).
 */
export const toolsRunner = (callerOf: (system: ActorSystemOf) => ToolCaller) =>
  fromCallback<StartCall, RunToolsInput>(({ input, sendBack, receive, system }) => {
    const call = callerOf(system);
    const controller = new AbortController();
    const start = (c: ToolCallInput) => {
      const settled = (outcome: ModelToolOutcome) => {
        if (!controller.signal.aborted) sendBack({ type: 'tool.settled', callId: c.callId, outcome });
      };
      const threw = (err: unknown) => failedOutcome({ name: c.name, toolName: c.name, serverId: '' }, messageOf(err));
      // A caller that throws instead of rejecting is answered the same way; a call of a step already
      // stopped (aborted while the start was queued) is never made.
      void Promise.resolve()
        .then(() => (controller.signal.throwIfAborted(), call(c, controller.signal)))
        .then(settled, (err: unknown) => settled(threw(err)));
    };
    input.calls.forEach(start);
    receive((e) => start(e.call));
    return () => controller.abort();
  });

/** The placeholders of the actors the owner provides: each rejects (every call of the tools runner fails). */
const notProvided = (actor: string) => () => Promise.reject(new Error(`turn machine: ${actor} not provided`));
export const modelStepNotProvided = fromPromise<ModelStepResult, ModelStepInput>(notProvided('modelStep'));
export const compactNotProvided = fromPromise<void, CompactInput>(notProvided('compact'));
export const runToolsNotProvided = toolsRunner(() => notProvided('runTools'));
