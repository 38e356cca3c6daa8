import {
  CopilotChat,
  CopilotKitProvider,
  HttpAgent,
  useDefaultRenderTool,
  useInterrupt,
} from '@copilotkit/react-core/v2';
import { useMemo } from 'react';
import { ApprovalCard } from './approval-card.tsx';
import type { Connection } from './connection.ts';
import { ToolCallCard } from './tool-call-card.tsx';

/**
 * CopilotKit talks to agentd's AG-UI face directly: an AG-UI `HttpAgent` handed to the provider as a
 * self-managed agent (no Copilot Runtime in between). agentd authenticates every run with the key.
 */
export function App({ connection }: { connection: Connection }) {
  const agents = useMemo(
    () => ({
      default: new HttpAgent({
        url: `${connection.url}/ag-ui`,
        headers: { Authorization: `Bearer ${connection.key}` },
      }),
    }),
    [connection],
  );
  return (
    <CopilotKitProvider selfManagedAgents={agents} enableInspector={false}>
      <main className="page">
        <header>
          <h1>agentd · CopilotKit over AG-UI</h1>
          <p>
            Talking to <code>{connection.url}/ag-ui</code>
          </p>
        </header>
        <Chat />
      </main>
    </CopilotKitProvider>
  );
}

function Chat() {
  // Every tool call shows as a card; a run that ends waiting for an approval shows Approve / Deny in the
  // chat. The render functions are called, not mounted: each returns an element, so the cards keep their own state.
  useDefaultRenderTool({ render: (call) => <ToolCallCard {...call} /> });
  useInterrupt({ render: (props) => <ApprovalCard {...props} /> });
  return (
    <CopilotChat
      className="chat"
      labels={{ chatInputPlaceholder: 'Message the agent…', welcomeMessageText: 'Ask agentd something.' }}
    />
  );
}
