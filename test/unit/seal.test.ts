import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSeal } from '../../src/mcp-face/seal.ts';

describe('sealed tokens of the /mcp face', () => {
  const key = randomBytes(32);
  let now = 1_000_000;
  const seal = createSeal<{ callId: string }>(
    () => Promise.resolve(key),
    'answer',
    60_000,
    () => now,
  );

  it('given a sealed payload, open answers it until it expires', async () => {
    const token = await seal.seal({ callId: 'c1' });
    expect(token).toMatch(/^[\x21-\x7e]+$/);
    expect(await seal.open(token)).toEqual({ callId: 'c1' });
    now += 60_001;
    expect(await seal.open(token)).toBeUndefined();
  });

  it('given a token changed in its payload or its tag, or malformed, open answers undefined', async () => {
    const token = await seal.seal({ callId: 'c1' });
    const [body, tag] = token.split('.') as [string, string];
    const forgedBody = Buffer.from(JSON.stringify({ p: { callId: 'c2' }, exp: now + 60_000 })).toString('base64url');
    for (const bad of [`${forgedBody}.${tag}`, `${body}.${tag.slice(1)}`, body, `${token}.x`, '', 'not a token']) {
      expect(await seal.open(bad), bad).toBeUndefined();
    }
  });

  it('given a token sealed for another purpose or under another key, open answers undefined', async () => {
    const other = createSeal<{ callId: string }>(
      () => Promise.resolve(key),
      'session',
      60_000,
      () => now,
    );
    const elsewhere = createSeal<{ callId: string }>(
      () => Promise.resolve(randomBytes(32)),
      'answer',
      60_000,
      () => now,
    );
    expect(await seal.open(await other.seal({ callId: 'c1' }))).toBeUndefined();
    expect(await seal.open(await elsewhere.seal({ callId: 'c1' }))).toBeUndefined();
  });
});
