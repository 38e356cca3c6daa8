/** Metadata every bus message travels with. */
export interface Envelope<N extends string = string, P = unknown> {
  id: string;
  /** Ms since the epoch, from the injected clock. */
  ts: number;
  /** Id of the command this message answers or descends from (its own id by default). */
  correlationId: string;
  /** The session the message is about: its payload's `sessionId` (the bus fills it in). */
  sessionId?: string;
  name: N;
  payload: P;
}

/** What a sender may set; the bus fills in the rest. */
export interface SendMeta {
  correlationId?: string;
  /** When the message stands for another time than now (a stored fact, a relay from another instance). */
  ts?: number;
}
