import type { ToolAction } from '../../conversation/tool-shapes.ts';
import type { ToolPolicyConfig } from '../../config/schema.ts';

/** The tool policy's action for a tool of a server: the first matching rule's, else the default. */
export type ToolPolicy = (serverId: string, toolName: string) => ToolAction;

export function createToolPolicy(config: Pick<ToolPolicyConfig, 'default' | 'rules'>): ToolPolicy {
  return (serverId, toolName) => {
    const rule = config.rules.find(
      (r) => (r.server === undefined || r.server === serverId) && (r.tool === undefined || r.tool === toolName),
    );
    return rule?.action ?? config.default;
  };
}

/** True when every tool runs without asking (the hot path skips the policy then). */
export const allowsEverything = (config: Pick<ToolPolicyConfig, 'default' | 'rules'>): boolean =>
  config.default === 'allow' && config.rules.every((r) => r.action === 'allow');
