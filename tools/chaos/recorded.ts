/**
 * What a chaos run records and hands to the checker (checker.ts): plain JSON, read off agentd's REST API (each
 * session's export and history), the receivers' logs, the marker file and the load's own notes of what agentd
 * acknowledged and what each WebSocket client saw. Nothing here refers to a live process, so a run's record can be
 * saved and checked again, and the unit test writes records by hand.
 */

/** One line of `GET /api/sessions/{id}/export` (`{seq, ts, event}`), the stored event as the log keeps it. */
export interface LogLine {
  seq: number;
  ts?: string;
  event: { type: string; turnId?: string; [key: string]: unknown };
}

/** A frame `{event, data}` as the history endpoint or a WebSocket gives it (`hello`: `data.storeId`). */
export interface Frame {
  event: string;
  data: { seq?: number; turnId?: string; [key: string]: unknown };
}

export interface SessionRecord {
  id: string;
  /** Its export, in the order given. */
  log: LogLine[];
  /** Its durable frames (`GET /api/sessions/{id}/history`). */
  history: Frame[];
}

/**
 * A message agentd acknowledged: `POST /api/message` or `message-sync` answered 200, a WebSocket client saw its
 * `userMessage`, or an A2A `SendMessage` or MCP `tools/call` answered its task.
 */
export interface AckedMessage {
  sessionId: string;
  turnId: string;
  via: 'message' | 'sync' | 'ws' | 'a2a' | 'mcp';
  /** When the run saw it acknowledged (ms since the epoch). */
  at?: number;
}

/**
 * A store identity a WebSocket client was told (a `hello` frame's `storeId` unlike the one it knew, or a
 * `storeChanged` frame), the first one included: when (ms since the epoch), by which client.
 */
export interface StoreSeen {
  client: string;
  at: number;
  storeId: string;
  via: 'hello' | 'storeChanged';
}

/** A lossy fault (a Redis wipe, a failover) and when it began (ms since the epoch). */
export interface LossyFaultRecord {
  kind: string;
  at: number;
}

/** A `message-sync` call: when it was sent and answered (ms since the epoch), and its status (0: no answer). */
export interface SyncCall {
  sessionId: string;
  turnId: string;
  sentAt: number;
  answeredAt: number;
  status: number;
}

/** What one WebSocket client (across all its connections and resumes) saw of one session: frames with a `seq`, in order. */
export interface WsView {
  client: string;
  sessionId: string;
  /** The `since` of its first subscription: it promised nothing at or before it. */
  from: number;
  /** `turnId` when the frame names one: a turn's transient `error` (a fact that could not be stored) repeats the last
   *  durable seq, which may be another turn's stored `error`. */
  frames: { event: string; seq: number; turnId?: string; storeId?: string }[];
}

/** A schedule's run (`GET /api/schedules/{id}/runs`). */
export interface RunRecord {
  status: string;
  plannedAt: string;
  session?: string;
  turnId?: string;
}

export interface ScheduleRecord {
  id: string;
  /** The session its runs go to. */
  sessionId: string;
  runs: RunRecord[];
}

/** One request the webhook receiver got. */
export interface WebhookHit {
  /** The `webhook-id` header. */
  id: string;
  body: string;
  /** The receiver answered 2xx (it took the delivery); false: it answered 503 and asked for a retry. */
  accepted: boolean;
}

/** One request the A2A push receiver got: the task it names and that task's state. */
export interface PushHit {
  taskId: string;
  state: string;
}

/** An A2A task sent with a push config: `<contextId>/<turnId>`. */
export interface A2aTask {
  taskId: string;
  sessionId: string;
  turnId: string;
}

/** An MCP task (`chat_with_agent` on the 2026-07-28 wire) and what `tasks/get` read of it once the run settled. */
export interface McpTask {
  taskId: string;
  sessionId: string;
  turnId: string;
  /** Its status (`working`, `input_required`, `completed`, `cancelled`, ...), and whether its inlined result is a tool error. */
  status?: string;
  isError?: boolean;
  /** Why `tasks/get` gave no status (its JSON-RPC error, or no answer). */
  error?: string;
}

export interface Recorded {
  sessions: SessionRecord[];
  acked: AckedMessage[];
  ws: WsView[];
  /** The marker file's lines: one per run of the non-idempotent tool, its call's unique key. */
  markerLines: string[];
  schedules: ScheduleRecord[];
  /** True when a webhook for every turn ending was registered before any session existed. */
  webhooksOn: boolean;
  webhooks: WebhookHit[];
  a2aTasks: A2aTask[];
  pushes: PushHit[];
  mcpTasks: McpTask[];
  /** What the WebSocket clients were told of the store's identity; absent in records of older runs. */
  stores?: StoreSeen[];
  /** The lossy faults (`--lossy`); absent or empty: none, and a lost acknowledged turn is `ackedNotOneEnding`. */
  lossyFaults?: LossyFaultRecord[];
  syncs?: SyncCall[];
}
