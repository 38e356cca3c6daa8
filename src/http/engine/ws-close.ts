/** The close reason of a WebSocket reader closed for falling behind (1008; docs/api.md, close codes). */
export const slowConsumer = (bytesUnread: number): string => `slow consumer: ${bytesUnread} bytes unread`;
