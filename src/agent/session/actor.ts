/**
 * The session actor: the session machine (machines/session.machine.ts) with its actors, and the
 * wiring of one actor to its session's port.
 *
 * Contracts:
 * - `sessionWithActors` is built once for every session (see ports.ts for why); its actors
 *   (the turn's model step and tools runner, the compactions) and its wait for the facts to be stored
 *   (`awaitSettled`) call the port of the actor system they run in.
 * - `createSessionActor` binds the port before the actor can start, under the id `turn:<sessionId>`
 *   (the id the inspector shows).
 */
import { createActor, fromPromise, type Actor } from 'xstate';
import { sessionMachine, type SessionInput } from '../../../machines/session.machine.ts';
import { toolsRunner, turnMachine } from '../../../machines/turn.machine.ts';
import type { CompactInput, ModelStepInput, ModelStepResult } from '../../conversation/turn-contract.ts';
import { bindPort, portOf, type SessionPort } from './ports.ts';

const compact = fromPromise<void, CompactInput>(({ input, signal, system }) => portOf(system).compact(input, signal));

const sessionWithActors = sessionMachine.provide({
  actors: {
    turn: turnMachine.provide({
      actors: {
        modelStep: fromPromise<ModelStepResult, ModelStepInput>(({ input, signal, system }) =>
          portOf(system).modelStep(input, signal),
        ),
        compact,
        runTools: toolsRunner((system) => portOf(system).callTool),
      },
      actions: { report: ({ system }, r) => portOf(system).report(r) },
    }),
    compact,
  },
  actions: {
    awaitSettled: ({ self, system }) =>
      portOf(system).settle(() => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'settled' });
      }),
  },
});

export type SessionActor = Actor<typeof sessionWithActors>;

/** A session actor, not started, whose actors use `port`. */
export function createSessionActor(input: SessionInput, port: SessionPort): SessionActor {
  const actor = createActor(sessionWithActors, { id: `turn:${input.sessionId}`, input });
  bindPort(actor.system, port);
  return actor;
}
