import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors/index.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Bearer-token check, active only when `server.auth.apiKey` is configured (the spec's default is
 * no authentication; agentd requires a key before it binds a non-loopback address).
 * Returns a function that throws UNAUTHORIZED unless the credential matches.
 */
export function createAuth(apiKey: string | undefined) {
  if (!apiKey) return (_credential: string | undefined) => undefined;
  const expected = digest(apiKey);
  return (credential: string | undefined): void => {
    const token = credential?.startsWith('Bearer ') ? credential.slice(7) : credential;
    if (!token || !timingSafeEqual(digest(token), expected)) {
      throw new AppError('UNAUTHORIZED', 'Missing or invalid API key', { suggestion: 'send Authorization: Bearer <server.auth.apiKey>' });
    }
  };
}
export type Auth = ReturnType<typeof createAuth>;
