/**
 * The spend reaction (src/agent/react): each stored fact with a usage (a model step — `assistantStep` or `response`
 * —, a compaction's summary, a tool server's sampling request) becomes a ledger entry of the session's principal, id
 * `<session>#<seq>`, so a fact handed on again after a crash counts once: its tokens, and its cost when its model has
 * a price (else the entry has no amount: the report shows the tokens, the cost unknown). The spend is dated by when
 * the fact was stored. A model step's entry ends the hold its budget check made (ledger.ts), as does a model step
 * stored without a usage.
 */
import type { Reaction } from '../agent/react/reactions.ts';
import type { SessionStoredEvent } from '../agent/frames.ts';
import { memoryOwnerOf } from '../memory/types.ts';
import { splitSessionKey } from '../session-id.ts';
import type { Ledger, SpendEntry } from './ledger.ts';

/** Whose spend a session's is: its owner (`@unnamed` for callers without a name). */
export const spenderOf = (sessionKey: string): string => memoryOwnerOf(splitSessionKey(sessionKey).owner);

const KINDS: Record<string, SpendEntry['kind']> = {
  assistantStep: 'step',
  response: 'step',
  contextCompacted: 'summary',
  serverSampled: 'sampling',
};

/** The ledger entry of a stored fact, or undefined when it has no usage. */
export function entryOf(stored: SessionStoredEvent): SpendEntry | undefined {
  const e = stored.event;
  if (!(e.type in KINDS) || !('usage' in e) || !e.usage) return undefined;
  const { usage } = e;
  return {
    principal: spenderOf(stored.sessionId),
    sessionId: stored.sessionId,
    ...('turnId' in e && e.turnId !== undefined && { turnId: e.turnId }),
    kind: KINDS[e.type]!,
    model: ('model' in e && e.model) || 'unknown',
    at: Date.parse(stored.ts),
    ...(usage.cost && { amount: usage.cost.amount, currency: usage.cost.currency, source: usage.cost.source }),
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
  };
}

export function spendReaction(ledger: Ledger): Reaction {
  return {
    name: 'spend',
    async handle(stored) {
      const entry = entryOf(stored);
      if (entry) return ledger.record(`${stored.sessionId}#${stored.seq}`, entry); // settles the step's hold
      if (KINDS[stored.event.type] === 'step') {
        // A model step the provider reported no usage for: no entry settles its hold; it ends here.
        await ledger.release(spenderOf(stored.sessionId), stored.sessionId, Date.parse(stored.ts));
      }
      return false;
    },
  };
}
