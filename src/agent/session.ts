/**
 * One session: its turn actor, its history projection (loaded once from the store, then folded
 * event by event) and its outbox. The session turns what the machine emits into domain events
 * (appended in order) and bus events (sent with the session's seq and the turn's correlationId).
 */
import { createActor, fromPromise, type Actor } from 'xstate';
import {
  turnMachine,
  type CallToolInput,
  type ModelStepInput,
  type PreparedStep,
  type PrepareStepInput,
  type SettleInput,
  type TurnEmitted,
  type TurnMessage,
} from '../../machines/turn.machine.ts';
import type { AppBus } from '../bus/app-bus.ts';
import type { Clock } from '../bus/envelope.ts';
import type { Logger } from '../log/index.ts';
import type { ChatMessage, LlmClient, ModelStep } from '../llm/types.ts';
import type { ModelTool, ModelToolOutcome } from '../mcp/messages.ts';
import type { DomainEvent, EventStore } from '../store/types.ts';
import { createHistory, type History } from './history.ts';
import { createOutbox, type Outbox } from './outbox.ts';
import { toTurnError } from './turn-steps.ts';

export interface SessionDeps {
  sessionId: string;
  systemPrompt: string;
  maxIterations: number;
  bus: AppBus;
  store: EventStore;
  llm: LlmClient;
  log: Logger;
  clock: Clock;
  /** The model's tool catalogue (never rejects). */
  listTools: () => Promise<ModelTool[]>;
}

export interface Session {
  readonly id: string;
  /** Queues a message; `queued` when it waits behind a running turn or other messages. */
  send(message: TurnMessage): { queued: boolean };
  /** Aborts the running turn; false when none is thinking or calling tools. */
  cancel(): boolean;
  /** Cancels the running and queued turns, records a reset; resolves with its seq once folded. */
  reset(correlationId: string): Promise<number>;
  /** Cancels everything, waits for the outbox, stops the actor. */
  close(reason: string): Promise<void>;
  readonly busy: boolean;
  readonly queued: number;
  /** Idle with nothing queued or unwritten (may be evicted). */
  readonly dormant: boolean;
  /** Clock time of the last command or turn end. */
  readonly lastActive: number;
  /** Set by close(): the session takes no more commands (the service opens a new one). */
  readonly closed: boolean;
}

/**
 * The history as the model sees it: the system prompt, then the projection. The projection's view
 * only grows until a reset replaces it, so this mirror copies each message once (per-turn cost does
 * not grow with the session's length).
 */
function modelView(history: History, systemPrompt: string) {
  const system: ChatMessage = { role: 'system', content: systemPrompt };
  let source: readonly ChatMessage[] | undefined;
  let view: ChatMessage[] = [];
  return (): ChatMessage[] => {
    const list = history.messages();
    if (list !== source || view.length - 1 > list.length) {
      source = list;
      view = [system];
    }
    for (let i = view.length - 1; i < list.length; i++) view.push(list[i] as ChatMessage);
    return view;
  };
}

export async function openSession(deps: SessionDeps): Promise<Session> {
  const { sessionId, bus, llm, log, clock } = deps;
  const past = await deps.store.read(sessionId);
  const history = createHistory();
  for (const s of past) history.apply(s.event);
  const messages = modelView(history, deps.systemPrompt);
  const now = () => new Date(clock.now()).toISOString();
  const outbox: Outbox = createOutbox({
    sessionId,
    store: deps.store,
    log,
    lastSeq: past.at(-1)?.seq ?? 0,
    onStored: (s) => history.apply(s.event),
    now,
  });
  let lastActive = clock.now();
  let closed = false;
  /** Chunks the turn machine has emitted (a step's first ones go through it; see modelStep). */
  let machineChunks = 0;

  const machine = turnMachine.provide({
    actors: {
      prepareStep: fromPromise<PreparedStep, PrepareStepInput>(async () => {
        const [tools] = await Promise.all([deps.listTools(), outbox.drained()]);
        return { messages: messages(), tools };
      }),
      modelStep: fromPromise<ModelStep, ModelStepInput>(({ input, signal }) => {
        // Hot path (measured in bench/, "chunks"): a step's text goes through the machine until the
        // machine has emitted a chunk of it (it marks the step streamed and joins steps); once it
        // has, every earlier delta is out, and later ones go out directly instead of as one machine
        // event each. A stopped step aborts `signal`, which is what the machine's token guard checks.
        let direct = false;
        const onText = (delta: string) => {
          if (delta === '' || signal.aborted) return;
          if (direct) return emitChunk(input.key, delta);
          const before = machineChunks;
          input.onText(delta);
          direct = machineChunks > before;
        };
        return llm.complete({ messages: input.messages as ChatMessage[], tools: input.toolDefinitions, signal, onText });
      }),
      callTool: fromPromise<ModelToolOutcome, CallToolInput>(async ({ input, signal }) => {
        const started = clock.now();
        try {
          return await bus.execute('mcp.callModelTool', { name: input.name, args: input.args, signal, hops: input.key.hops + 1 }, input.key);
        } catch (err) {
          const text = `Tool "${input.name}" failed: ${toTurnError(err).message}`;
          return { success: false, text, result: { error: text }, serverId: '', toolName: input.name, durationMs: clock.now() - started };
        }
      }),
      settle: fromPromise<void, SettleInput>(() => outbox.drained()),
    },
  });
  const actor: Actor<typeof machine> = createActor(machine, { input: { sessionId, maxIterations: deps.maxIterations } });

  const record = (event: DomainEvent, then?: Parameters<Outbox['durable']>[1]) => outbox.durable(event, then);

  /** The hot path: no allocation beyond the payload. */
  function emitChunk(key: TurnEmitted['key'], content: string): void {
    const turnId = key.turnId;
    if (outbox.idle) bus.emit('agent.chunk', { sessionId, turnId, seq: outbox.lastSeq, content }, key);
    else outbox.transient((seq) => bus.emit('agent.chunk', { sessionId, turnId, seq, content }, key));
  }

  /** Machine events → domain events and bus events. */
  actor.on('*', (e: TurnEmitted) => {
    const { key } = e;
    const turnId = key.turnId;
    switch (e.type) {
      case 'chunk':
        machineChunks++;
        return emitChunk(key, e.content);
      case 'userMessage':
        record(
          { type: 'userMessage', turnId, content: e.content, ...(e.image && { image: e.image }) },
          (s) => bus.emit('agent.userMessage', { sessionId, turnId, seq: s.seq, content: e.content, hasImage: e.image !== undefined }, key),
        );
        return;
      case 'thinking':
        outbox.transient((seq) => bus.emit('agent.thinking', { sessionId, turnId, seq }, key));
        return;
      case 'assistantStep': {
        const { text, toolCalls, usage } = e.step;
        record({ type: 'assistantMessage', turnId, content: text, toolCalls, final: false, model: llm.model, ...(usage && { usage }) });
        return;
      }
      case 'toolCall': {
        const { callId, toolName, serverId, args } = e;
        record({ type: 'toolCall', turnId, callId, toolName, serverId, args }, (s) =>
          bus.emit('agent.toolCall', { toolName, serverId, callId, args, sessionId, turnId, seq: s.seq }, key),
        );
        return;
      }
      case 'toolResult': {
        const { callId, toolName, serverId, success, result, text, durationMs } = e;
        record({ type: 'toolResult', turnId, callId, toolName, serverId, success, result: text, durationMs }, (s) =>
          bus.emit('agent.toolResult', { toolName, serverId, callId, success, result, durationMs, sessionId, turnId, seq: s.seq }, key),
        );
        return;
      }
      case 'response': {
        const usage = e.usage && { usage: e.usage };
        record({ type: 'assistantMessage', turnId, content: e.finalText, final: true, model: llm.model, ...usage }, (s) =>
          bus.emit('agent.response', { content: e.content, sessionId, turnId, seq: s.seq, model: llm.model, ...usage }, key),
        );
        return;
      }
      case 'failed':
        log.warn({ sessionId, turnId, code: e.code, message: e.message }, 'turn failed');
        record({ type: 'turnFailed', turnId, code: e.code, message: e.message }, (s) =>
          bus.emit('agent.error', { code: e.code, message: e.message, details: e.details, sessionId, turnId, seq: s.seq }, key),
        );
        return;
      case 'cancelled': {
        const message = cancelMessage(e.reason);
        record({ type: 'turnFailed', turnId, code: 'AGENT_ERROR', message, cancelled: true }, (s) =>
          bus.emit('agent.error', { code: 'AGENT_ERROR', message, details: { reason: e.reason }, sessionId, turnId, seq: s.seq }, key),
        );
        return;
      }
      case 'dropped': {
        const message = `message discarded before its turn started (${e.reason})`;
        outbox.transient((seq) => bus.emit('agent.error', { code: 'AGENT_ERROR', message, details: { reason: e.reason }, sessionId, turnId, seq }, key));
        return;
      }
    }
  });
  actor.subscribe({
    next: (snap) => {
      if (snap.matches('idle')) lastActive = clock.now();
    },
    error: (err) => log.error({ err, sessionId }, 'turn actor failed'),
  });
  actor.start();

  const running = () => {
    const snap = actor.getSnapshot();
    return snap.matches('thinking') || snap.matches('callingTools');
  };
  /** A turn runs, or has ended but its last events are not yet out (an end state settles right after). */
  const busy = () => running() || (!actor.getSnapshot().matches('idle') && !outbox.idle);

  return {
    id: sessionId,
    send(message) {
      lastActive = clock.now();
      const queued = busy() || actor.getSnapshot().context.queue.length > 0;
      actor.send({ type: 'MESSAGE', message });
      return { queued };
    },
    cancel() {
      lastActive = clock.now();
      if (!running()) return false;
      actor.send({ type: 'CANCEL', reason: 'cancelled' });
      return true;
    },
    reset(correlationId) {
      lastActive = clock.now();
      actor.send({ type: 'DISCARD', reason: 'reset' });
      return new Promise<number>((resolve) =>
        record({ type: 'reset' }, (s) => {
          bus.emit('agent.reset', { sessionId, seq: s.seq }, { correlationId, sessionId });
          resolve(s.seq);
        }),
      );
    },
    async close(reason) {
      closed = true;
      actor.send({ type: 'DISCARD', reason });
      await outbox.drained();
      actor.stop();
      await outbox.drained();
    },
    get busy() {
      return busy();
    },
    get queued() {
      return actor.getSnapshot().context.queue.length;
    },
    get dormant() {
      const snap = actor.getSnapshot();
      return snap.matches('idle') && snap.context.queue.length === 0 && outbox.idle;
    },
    get lastActive() {
      return lastActive;
    },
    get closed() {
      return closed;
    },
  };
}

function cancelMessage(reason: string): string {
  return reason === 'cancelled' ? 'turn cancelled' : `turn cancelled (${reason})`;
}
