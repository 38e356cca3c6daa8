import type { InterruptRenderProps } from '@copilotkit/react-core/v2';
import { useState } from 'react';

/**
 * agentd ended the run waiting for a person (`RUN_FINISHED` with an interrupt outcome, reason
 * `tool_call`). Approve or Deny answers it: CopilotKit starts a new run whose `resume` carries
 * `{ approved }`, and that run goes on with the tool's result.
 */
export function ApprovalCard({ interrupt, resolve }: InterruptRenderProps) {
  const [answer, setAnswer] = useState<'approved' | 'denied'>();
  const answerWith = (approved: boolean) => {
    setAnswer(approved ? 'approved' : 'denied');
    void resolve({ approved });
  };
  return (
    <section className="approval" aria-label="Approval">
      <p>{interrupt?.message ?? 'A tool call waits for your approval.'}</p>
      {answer ? (
        <p className="approval-answer">You {answer} it.</p>
      ) : (
        <div className="approval-buttons">
          <button type="button" onClick={() => answerWith(true)}>
            Approve
          </button>
          <button type="button" onClick={() => answerWith(false)}>
            Deny
          </button>
        </div>
      )}
    </section>
  );
}
