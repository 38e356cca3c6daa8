/**
 * `agentd-server/client`: a typed client of agentd for Node 20+ and browsers (docs/client.md). No runtime
 * dependency: fetch, WebSocket (the `ws` package on Node 20) and WebCrypto.
 */
export { AgentdClient, type RawRequest, type SendOptions } from './client.ts';
export { AgentdError } from './errors.ts';
export { verifyWebhook, verifyPushNotification, type PushCheck, type PushClaims, type WebhookCheck } from './verify.ts';
export { joinText, type Frame, type FrameEvent, type FrameOf } from './frames.ts';
export { ROUTES, NOT_IN_CLIENT, type RouteName, type RouteInfo, type RouteTypes } from './routes.ts';
export type { Api, RouteArgs, RouteAnswer } from './api.ts';
export type { ChatOptions, LocalTool } from './chat.ts';
export type { ClientToolHandler } from './client-tools.ts';
export type { FollowOptions } from './follow.ts';
export type { CallOptions } from './http.ts';
export type { ClientOptions, ReconnectOptions, WebSocketLike } from './options.ts';
export type { QuestionReply, QuestionsOptions, WaitingQuestion } from './questions.ts';
