/** The close reason of a WebSocket reader closed for falling behind (1008; docs/api.md, close codes). */
export const slowConsumer = (bytesUnread: number): string => `slow consumer: ${bytesUnread} bytes unread`;

/**
 * How long a socket we closed waits for its peer's answer while the peer takes nothing of what is still waiting for
 * it: then it is cut (destroyed), whatever the engine. A peer that reads again sooner gets the close frame.
 */
export const CLOSE_GRACE_MS = 2000;
