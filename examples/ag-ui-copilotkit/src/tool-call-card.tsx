interface ToolCallCardProps {
  name: string;
  parameters: unknown;
  status: 'inProgress' | 'executing' | 'complete';
  result: string | undefined;
}

/** A tool call the agent made on one of agentd's tool servers: its name, arguments and, once done, its result. */
export function ToolCallCard({ name, parameters, status, result }: ToolCallCardProps) {
  return (
    <section className="tool-call" data-status={status} aria-label={`Tool call ${name}`}>
      <div className="tool-call-head">
        <strong>{name}</strong> <span className="tool-call-status">{status === 'complete' ? 'done' : 'running'}</span>
      </div>
      <pre className="tool-call-args">{JSON.stringify(parameters)}</pre>
      {result !== undefined && <pre className="tool-call-result">{result}</pre>}
    </section>
  );
}
