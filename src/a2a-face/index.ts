/** The agent served over A2A: the card, JSON-RPC (face.ts), HTTP+JSON (rest-binding.ts). */
export { createA2aFace, type A2aFace } from './face.ts';
export { agentCard, agentCardSchema, endpointOrigin, A2A_PATH, A2A_REST_PATH, CARD_PATH } from './card.ts';
export { versionOf } from './wire.ts';
export { createA2aRest, matchRestRoute, type A2aRest, type RestRoute } from './rest-binding.ts';
export { a2aMount } from './endpoint.ts';
export type { A2aPushConfigs, PushConfig } from './face-types.ts';
export { FINAL_STATES, taskView, taskIdOf, type TaskState, type TaskView } from './task-view.ts';
export { encodeTask } from './wire.ts';
