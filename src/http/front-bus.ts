/** The bus as the front end sees it: agent and MCP commands and events (the whole bus: src/app.ts; features bring theirs). */
import type { AgentCommands, AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { McpCommands, McpEvents } from '../tools/index.ts';

export type FrontCommands = AgentCommands & McpCommands;
export type FrontEvents = AgentEvents & McpEvents;
export type FrontEndBus = Bus<FrontCommands, FrontEvents>;
