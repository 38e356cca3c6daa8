/**
 * Whether what an instance sees shows its store went back (src/store/store-lost.ts `judgeLoss`), given/when/then:
 * given what it held, when it reads the store, then a loss (its cause, the sessions and seqs gone, whether the
 * identity must be renewed) or none. And the refusal a write gets for one.
 */
import { describe, expect, it } from 'vitest';
import { isFenced, isStoreLost, judgeLoss, storeLostError, type LossEvidence } from '../../src/store/index.ts';

const given = (evidence: LossEvidence) => ({ then: () => judgeLoss(evidence) });

describe('store loss: the decision', () => {
  it('the same identity is no loss; none, or another, is one the identity check already shows', () => {
    expect(given({ kind: 'storeId', held: 'a', found: 'a' }).then()).toBeUndefined();
    expect(given({ kind: 'storeId', held: 'a', found: undefined }).then()).toEqual({
      cause: 'its identity is gone',
      sessions: [],
      renew: false,
    });
    expect(given({ kind: 'storeId', held: 'a', found: 'b' }).then()).toMatchObject({
      cause: 'its identity changed to b',
      renew: false,
    });
  });

  it('a tail below what was written or served is a loss of those seqs, renewing the identity; at or above, none', () => {
    const tail = (found: number): LossEvidence => ({ kind: 'tail', storeId: 'a', sessionId: 's', held: 6, found });
    expect(given(tail(6)).then()).toBeUndefined();
    expect(given(tail(9)).then()).toBeUndefined(); // another writer went on: forward, not back
    expect(given(tail(2)).then()).toEqual({
      cause: 'session s ends at seq 2, below seq 6 it had',
      sessions: [{ sessionId: 's', seqs: { from: 3, to: 6 } }],
      renew: true,
    });
  });

  it('a fencing token below the one held is a loss; a greater one is another instance taking the session', () => {
    const fence = (found: number): LossEvidence => ({ kind: 'fence', storeId: 'a', sessionId: 's', held: 50, found });
    expect(given(fence(51)).then()).toBeUndefined();
    expect(given(fence(50)).then()).toBeUndefined();
    expect(given(fence(49)).then()).toMatchObject({ sessions: [{ sessionId: 's' }], renew: true });
  });

  it('a write refused for a loss is SERVICE_UNAVAILABLE, reason storage, and not a fenced one', () => {
    const err = storeLostError({ kind: 'tail', storeId: 'a', sessionId: 's', held: 6, found: 0 });
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.details).toMatchObject({ reason: 'storage', lost: true });
    expect(String(err.details.cause)).toMatch(/^the store lost data \(/);
    expect(isStoreLost(err)).toBe(true);
    expect(isFenced(err)).toBe(false);
  });
});
