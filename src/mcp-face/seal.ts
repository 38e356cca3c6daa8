import { createHmac, timingSafeEqual } from 'node:crypto';
import { madeOnce } from '../made-once.ts';

/** Where the face's key comes from: the same bytes on every instance that shares the store (`sharedSecret`). */
export type FaceKey = () => Promise<Uint8Array>;

/** The key for one purpose, derived from the face's key: what is sealed for one purpose never opens as another. */
export const purposeKey = (key: Uint8Array, purpose: string): Buffer =>
  createHmac('sha256', key).update(`agentd.mcp-face:${purpose}`).digest();

/**
 * A sealed token the face hands to a client and reads back: `<base64url JSON { p, exp }>.<base64url HMAC-SHA256>`
 * under the purpose's key. Signed, not encrypted: the client can read the payload (never put a secret in it).
 * `open` answers `undefined` for a malformed, forged or expired token (`exp`: epoch ms, `ttlMs` after `seal`).
 */
export function createSeal<T>(key: FaceKey, purpose: string, ttlMs: number, now: () => number = Date.now) {
  const sealKey = madeOnce(async () => purposeKey(await key(), purpose));
  const mac = async (body: string) =>
    createHmac('sha256', await sealKey())
      .update(body)
      .digest();
  return {
    async seal(payload: T): Promise<string> {
      const body = Buffer.from(JSON.stringify({ p: payload, exp: now() + ttlMs })).toString('base64url');
      return `${body}.${(await mac(body)).toString('base64url')}`;
    },
    async open(token: string): Promise<T | undefined> {
      const [body, tag, extra] = token.split('.');
      if (body === undefined || tag === undefined || extra !== undefined) return undefined;
      const expected = await mac(body);
      const given = Buffer.from(tag, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        const { p, exp } = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { p: T; exp: number };
        return typeof exp === 'number' && exp > now() ? p : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
