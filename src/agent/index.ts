/** Public face of the agent: the session service, its bus contract and the replay mapping. */
export { createAgentService, type AgentService, type AgentServiceOptions } from './service.ts';
export { storedToWire, type WireEvent } from './wire.ts';
export { iterationLimitMessage } from './turn-steps.ts';
export type * from './messages.ts';
export { DEFAULT_SESSION } from './messages.ts';
export { createTurnWaiter, type TurnWaiter } from './turn-waiter.ts';
