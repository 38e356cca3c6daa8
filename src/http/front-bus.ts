/**
 * The bus as the front end uses it: it sends every agent and MCP command and turns every agent and
 * MCP event into frames. (The whole application's bus is composed in src/app.ts.)
 */
import type { AgentCommands, AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { McpCommands, McpEvents } from '../tools/index.ts';

export type FrontCommands = AgentCommands & McpCommands;
export type FrontEvents = AgentEvents & McpEvents;
export type FrontEndBus = Bus<FrontCommands, FrontEvents>;
