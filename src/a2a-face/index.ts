/** The agent served over A2A (agent card, /a2a, /a2a/rest): see face.ts for the JSON-RPC contracts, rest-binding.ts for HTTP+JSON, task-view.ts for the mapping. */
export { createA2aFace, type A2aFace } from './face.ts';
export type { A2aAnswer, A2aCallContext, RpcResponse } from './face-types.ts';
export { agentCard, agentCardSchema, endpointOrigin, A2A_PATH, A2A_REST_PATH, CARD_PATH } from './card.ts';
export { versionOf, type A2aVersion } from './wire.ts';
export { taskView, taskIdOf, parseTaskId, type TaskView, type TaskState } from './task-view.ts';
export { createA2aRest, matchRestRoute, type A2aRest, type RestRoute } from './rest-binding.ts';
