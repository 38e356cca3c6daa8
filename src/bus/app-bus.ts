/**
 * The application's bus: the union of every component's command and event maps.
 * Components declare their own maps beside their code; this file only composes them.
 */
import type { Bus } from './bus.ts';
import type { McpCommands, McpEvents } from '../mcp/messages.ts';
import type { AgentCommands, AgentEvents } from '../agent/messages.ts';

export type AppCommands = McpCommands & AgentCommands;
export type AppEvents = McpEvents & AgentEvents;
export type AppBus = Bus<AppCommands, AppEvents>;
