/**
 * The chaos run's approval bot: answers every tool call that waits for approval (`mark_ask`), approving most and
 * denying some (drawn from the PRNG), over REST on an instance that is up. It answers when a WebSocket client sees
 * `toolApprovalRequested`, and sweeps the sessions' pending approvals every 2 s (a frame missed across a fault, an
 * answer lost with its instance). A 404 or 409 (answered already, or gone) is fine; the next sweep retries the rest.
 */
import { call } from './http.ts';
import type { Frame } from './recorded.ts';
import { countOperation, upInstance, type World } from './world.ts';
import { sleep } from './wait.ts';

export interface ApprovalBot {
  onFrame(frame: Frame): void;
  /** Stops sweeping (after the run settled). */
  stop(): Promise<void>;
}

export function startApprovalBot(world: World, sessions: string[]): ApprovalBot {
  const prng = world.prng.fork('approvals');
  const decided = new Map<string, 'approve' | 'deny'>();
  let stopped = false;

  const answer = async (sessionId: string, callId: string): Promise<void> => {
    const base = upInstance(world, prng);
    if (base === undefined) return;
    const key = `${sessionId}\u0000${callId}`;
    let decision = decided.get(key);
    if (decision === undefined) {
      decision = prng.chance(0.85) ? 'approve' : 'deny';
      decided.set(key, decision);
      countOperation(world, 'approval');
    }
    await call(base, 'POST', `/api/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(callId)}`, {
      decision,
    });
  };

  const sweep = (async () => {
    while (!stopped) {
      await sleep(2000);
      for (const sessionId of sessions) {
        const base = upInstance(world, prng);
        if (stopped || base === undefined) break;
        const pending = await call(base, 'GET', `/api/sessions/${encodeURIComponent(sessionId)}/approvals`);
        const approvals = (pending.body as { approvals?: { callId: string }[] } | undefined)?.approvals ?? [];
        for (const a of approvals) await answer(sessionId, a.callId);
      }
    }
  })();

  return {
    onFrame(frame) {
      const { sessionId, callId } = frame.data as { sessionId?: unknown; callId?: unknown };
      if (frame.event === 'toolApprovalRequested' && typeof sessionId === 'string' && typeof callId === 'string')
        void answer(sessionId, callId);
    },
    async stop() {
      stopped = true;
      await sweep;
    },
  };
}
