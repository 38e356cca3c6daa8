import { useAgent } from '@copilotkit/react-core/v2';
import { useEffect, useState } from 'react';

interface ToolCallCardProps {
  name: string;
  toolCallId: string;
  parameters: unknown;
  status: 'inProgress' | 'executing' | 'complete';
}

/** A tool call the agent made on one of agentd's tool servers: its name, arguments and, once done, its result. */
export function ToolCallCard({ name, toolCallId, parameters, status }: ToolCallCardProps) {
  const result = useToolResult(toolCallId);
  return (
    <section className="tool-call" data-status={status} aria-label={`Tool call ${name}`}>
      <div className="tool-call-head">
        <strong>{name}</strong> <span className="tool-call-status">{result === undefined ? 'running' : 'done'}</span>
      </div>
      <pre className="tool-call-args">{JSON.stringify(parameters)}</pre>
      {result !== undefined && <pre className="tool-call-result">{readable(result)}</pre>}
    </section>
  );
}

/**
 * The call's result as agentd sent it (`TOOL_CALL_RESULT`), else the chat's tool message for the call.
 * Answering an approval, CopilotKit records the answer (`{"approved":true}`) as the call's tool message
 * and keeps that one, so the result the resumed run sends is read from the event itself.
 */
function useToolResult(toolCallId: string): string | undefined {
  const { agent } = useAgent();
  const [sent, setSent] = useState<string>();
  useEffect(() => {
    const subscription = agent.subscribe({
      onToolCallResultEvent: ({ event }) => {
        if (event.toolCallId === toolCallId) setSent(event.content);
      },
    });
    return () => subscription.unsubscribe();
  }, [agent, toolCallId]);
  const message = agent.messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
  return sent ?? (message?.role === 'tool' ? message.content : undefined);
}

/** An MCP tool result (`{ content: [{ type: "text", text }] }`) as its text; anything else as it came. */
function readable(result: string): string {
  try {
    const { content } = JSON.parse(result) as { content?: { type?: string; text?: string }[] };
    const texts = content?.flatMap((part) => (part.type === 'text' && part.text !== undefined ? [part.text] : []));
    return texts?.length ? texts.join('\n') : result;
  } catch {
    return result;
  }
}
