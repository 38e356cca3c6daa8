/** The bus as the front end sees it: agent, MCP and webhook commands, agent and MCP events (the whole bus: src/app.ts). */
import type { AgentCommands, AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { McpCommands, McpEvents } from '../tools/index.ts';
import type { WebhookCommands } from '../webhooks/messages.ts';

export type FrontCommands = AgentCommands & McpCommands & WebhookCommands;
export type FrontEvents = AgentEvents & McpEvents;
export type FrontEndBus = Bus<FrontCommands, FrontEvents>;
