/** madeOnce: made on the first call and kept; a failure is forgotten, so the next call makes it again. */
import { describe, expect, it } from 'vitest';
import { madeOnce } from '../../src/made-once.ts';

describe('madeOnce', () => {
  it('given concurrent and later calls, then make runs once and each gets its result', async () => {
    let calls = 0;
    const key = madeOnce(() => Promise.resolve(++calls));
    expect(await Promise.all([key(), key()])).toEqual([1, 1]);
    expect(await key()).toBe(1);
    expect(calls).toBe(1);
  });

  it('given a failure, then that call rejects and the next one makes it again', async () => {
    let calls = 0;
    const key = madeOnce(() => (++calls === 1 ? Promise.reject(new Error('store down')) : Promise.resolve('key')));
    await expect(key()).rejects.toThrow('store down');
    expect(await key()).toBe('key');
    expect(await key()).toBe('key');
    expect(calls).toBe(2);
  });
});
