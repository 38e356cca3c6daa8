/** What the AG-UI face declares (`GET <path>/capabilities`), from the agent file (docs/ag-ui.md, "Endpoints"). */
import type { AgentCapabilities } from '@ag-ui/core';
import type { AgentConfig } from '../config/schema.ts';

export type CapabilitiesConfig = Pick<AgentConfig, 'name' | 'description' | 'version'> & {
  llm: Pick<AgentConfig['llm'], 'maxIterations'>;
  agUi: Pick<AgentConfig['agUi'], 'clientTools'>;
};

export const agentCapabilities = (config: CapabilitiesConfig): AgentCapabilities => ({
  identity: {
    name: config.name,
    type: 'agentd',
    version: config.version,
    ...(config.description !== undefined && { description: config.description }),
  },
  transport: { streaming: true, httpBinary: true, websocket: false, pushNotifications: false, resumable: false },
  tools: { supported: true, parallelCalls: true, clientProvided: config.agUi.clientTools.enabled },
  humanInTheLoop: { supported: true, approvals: true, interrupts: true, approveWithEdits: false },
  reasoning: { supported: true, streaming: false },
  state: { snapshots: false, deltas: false, persistentState: false },
  execution: { maxIterations: config.llm.maxIterations },
});
