/**
 * The tools offered to the model: every tool of every connected server, servers in the order added and tools in
 * listing order, under model-visible names (naming.ts). Task-only tools (`execution.taskSupport: "required"`) are left
 * out unless their server runs tools as tasks (`runsTasks`; mcp/task-call.ts). A `qualified` server's tools (an A2A
 * agent's generic skill ids) are named `<server>--<tool>`. `parameters` drop `$schema`/`$id` (some providers reject
 * them). A tool is `rerunSafe` when annotated `readOnlyHint` or `idempotentHint`, or its server's config says
 * `idempotent: true`.
 * MCP Apps (mcp/app-resource.ts): a tool whose `_meta.ui.visibility` leaves out the model stays in the catalogue (an
 * app may call it by name) but is not offered to the model (`offered`); a model tool carries its `_meta.ui` as `ui`.
 */
import type { Tool } from '@modelcontextprotocol/client';
import type { ModelTool, ToolRecord } from './messages.ts';
import { hiddenFromModel, toolUi } from './mcp/app-resource.ts';
import { assignModelNames, qualifiedName } from './naming.ts';

export interface CatalogueItem {
  modelName: string;
  serverId: string;
  tool: Tool;
  /** Its server's config says every tool of it may be called twice. */
  idempotent?: boolean;
}

export function buildCatalogue(
  servers: readonly {
    serverId: string;
    tools: readonly Tool[];
    qualified?: boolean;
    idempotent?: boolean;
    runsTasks?: boolean;
  }[],
): Map<string, CatalogueItem> {
  const items = servers.flatMap(({ serverId, tools, qualified, idempotent, runsTasks }) =>
    tools
      .filter((tool) => runsTasks === true || tool.execution?.taskSupport !== 'required')
      .map((tool) => ({ serverId, tool, qualified, idempotent })),
  );
  const names = assignModelNames(
    items.map((i) => ({
      serverId: i.serverId,
      toolName: i.qualified ? qualifiedName(i.serverId, i.tool.name) : i.tool.name,
    })),
  );
  return new Map(
    items.map(({ serverId, tool, idempotent }, i) => [
      names[i]!,
      { modelName: names[i]!, serverId, tool, ...(idempotent && { idempotent }) },
    ]),
  );
}

export function toModelTool(item: CatalogueItem): ModelTool {
  const { $schema: _s, $id: _i, ...parameters } = item.tool.inputSchema as Record<string, unknown>;
  const ui = toolUi(item.tool);
  return {
    name: item.modelName,
    description: item.tool.description ?? item.tool.title ?? '',
    parameters,
    serverId: item.serverId,
    toolName: item.tool.name,
    ...(rerunSafe(item) && { rerunSafe: true }),
    ...(ui && { ui }),
  };
}

/** The catalogue's model tools: those offered to the model, and with `withAppOnly` those only apps may call too. */
export const offered = (catalogue: ReadonlyMap<string, CatalogueItem>, withAppOnly = false): ModelTool[] =>
  [...catalogue.values()].filter((item) => withAppOnly || !hiddenFromModel(item.tool)).map(toModelTool);

const rerunSafe = ({ tool, idempotent }: CatalogueItem): boolean =>
  idempotent === true || tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true;

/** The spec's tool record; `id` is the tool's name. */
export function toToolRecord(tool: Tool): ToolRecord {
  return {
    id: tool.name,
    name: tool.name,
    description: tool.description ?? tool.title ?? '',
    inputSchema: tool.inputSchema,
  };
}
