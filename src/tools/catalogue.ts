/**
 * The tool catalogue offered to the model: every tool of every connected server under a model-visible name.
 *
 * Contracts:
 * - Servers and tools keep their order (servers in the order they were added, tools in listing order).
 * - Tools that the server only runs as tasks (`execution.taskSupport: "required"`) are left out: a plain
 *   tools/call cannot run them.
 * - `parameters` is the tool's inputSchema without `$schema`/`$id` (some providers reject them).
 * - Tools of a `qualified` server (an A2A agent, whose skill ids are generic: `chat`) are always named
 *   `<server>--<tool>` (then made valid and unique by naming.ts like any other name).
 */
import type { Tool } from '@modelcontextprotocol/client';
import type { ModelTool, ToolRecord } from './messages.ts';
import { assignModelNames, qualifiedName } from './naming.ts';

export interface CatalogueItem {
  modelName: string;
  serverId: string;
  tool: Tool;
}

export function buildCatalogue(
  servers: readonly { serverId: string; tools: readonly Tool[]; qualified?: boolean }[],
): Map<string, CatalogueItem> {
  const items = servers.flatMap(({ serverId, tools, qualified }) =>
    tools.filter((tool) => tool.execution?.taskSupport !== 'required').map((tool) => ({ serverId, tool, qualified })),
  );
  const names = assignModelNames(
    items.map((i) => ({
      serverId: i.serverId,
      toolName: i.qualified ? qualifiedName(i.serverId, i.tool.name) : i.tool.name,
    })),
  );
  return new Map(items.map(({ serverId, tool }, i) => [names[i]!, { modelName: names[i]!, serverId, tool }]));
}

export function toModelTool(item: CatalogueItem): ModelTool {
  const { $schema: _s, $id: _i, ...parameters } = item.tool.inputSchema as Record<string, unknown>;
  return {
    name: item.modelName,
    description: item.tool.description ?? item.tool.title ?? '',
    parameters,
    serverId: item.serverId,
    toolName: item.tool.name,
  };
}

/** The spec's tool record; `id` is the tool's name (unique within its server, as a server's id is its name). */
export function toToolRecord(tool: Tool): ToolRecord {
  return {
    id: tool.name,
    name: tool.name,
    description: tool.description ?? tool.title ?? '',
    inputSchema: tool.inputSchema,
  };
}
