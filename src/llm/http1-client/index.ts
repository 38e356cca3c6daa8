/**
 * agentd's HTTP/1.1 model client, packaged apart (README.md): a keep-alive pool that posts ready bytes and hands
 * the answer's body on as it arrives, optionally through a forward proxy, and the server-sent events framing
 * model streams use. This is the whole API `src/llm` uses; nothing here knows about models.
 */
export { createHttp1Pool, type Http1Answer, type Http1Body, type Http1Pool } from './pool.ts';
export { HttpFrameError } from './frames.ts';
export { ProxyRefusal } from './tunnel.ts';
export { createSseFramer, SseEventTooLarge, type SseFramer } from './sse.ts';
