/** Metadata every bus message travels with. */
export interface Envelope<N extends string = string, P = unknown> {
  /** Unique id of this message. */
  id: string;
  /** Milliseconds since the epoch, from the injected clock. */
  ts: number;
  /** Id of the command (or request) this message answers or descends from. */
  correlationId: string;
  /** Session the message concerns, if any. */
  sessionId?: string;
  name: N;
  payload: P;
}

/** What a sender may set; the bus fills in the rest. */
export interface SendMeta {
  correlationId?: string;
  sessionId?: string;
  /** The time the message stands for when it is not now (ms since the epoch): a stored fact's, or one relayed from another instance. */
  ts?: number;
}
