/**
 * @ag-ui/client's `HttpAgent` on an agentd's AG-UI face, for int tests: a client of one thread (a fresh one unless
 * named) as one key, over SSE or, with `proto`, the protobuf encoding, recording every event it applies.
 */
import { randomUUID } from 'node:crypto';
import { HttpAgent, type AgentSubscriber, type BaseEvent, type RunAgentInput } from '@ag-ui/client';
import type { RunningApp } from './start-app.ts';

export const PROTO = 'application/vnd.ag-ui.event+proto';

/** An HttpAgent that asks for the protobuf encoding (HttpAgent itself always asks for SSE). */
export class ProtoAgent extends HttpAgent {
  protected override requestInit(input: RunAgentInput): RequestInit {
    const init = super.requestInit(input);
    return { ...init, headers: { ...(init.headers as Record<string, string>), Accept: PROTO } };
  }
}

export interface AgUiClientOptions {
  key: string;
  threadId?: string;
  proto?: boolean;
}

/** A client of thread `threadId` on `app` as `key`; `say` adds a user message; `events` every event applied. */
export function agUiClient(app: RunningApp, opts: AgUiClientOptions) {
  const config = {
    url: `${app.url}/ag-ui`,
    headers: { Authorization: `Bearer ${opts.key}` },
    threadId: opts.threadId ?? `t-${randomUUID().slice(0, 8)}`,
  };
  const agent = opts.proto ? new ProtoAgent(config) : new HttpAgent(config);
  const events: BaseEvent[] = [];
  const recorder: AgentSubscriber = { onEvent: ({ event }) => void events.push(event) };
  agent.subscribe(recorder);
  const say = (text: string) => agent.addMessage({ id: randomUUID(), role: 'user', content: text });
  return { agent, events, say };
}
