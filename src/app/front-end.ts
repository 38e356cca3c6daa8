/** What createApp adds to the front end: the OAuth callback URL, known once it listens, and its store id's guard. */
import type { FrontEnd } from '../http/server.ts';

/**
 * The OAuth callback URL of tool servers' sign-ins (`/api/oauth/callback` on the front end), known once the front end
 * listens: port 0 picks one, and a wildcard bind is reached on 127.0.0.1.
 */
export function oauthCallback() {
  let listening: { host: string; port: number } | undefined;
  return {
    url: (): string => {
      const host = listening && !['0.0.0.0', '::', ''].includes(listening.host) ? listening.host : '127.0.0.1';
      const shown = host.includes(':') ? `[${host}]` : host;
      return `http://${shown}${listening ? `:${listening.port}` : ''}/api/oauth/callback`;
    },
    listened: (host: string, port: number): void => void (listening = { host, port }),
  };
}

/** `served`, with `before` run before it listens (the store's id is read then) and `after` told where it listens. */
export const listeningFrontEnd = (
  served: FrontEnd,
  before: () => Promise<void>,
  after: (host: string, port: number) => void,
): FrontEnd => ({
  ...served,
  async listen(host, port, options) {
    await before();
    const bound = await served.listen(host, port, options);
    after(host, bound);
    return bound;
  },
});

/** The store's id before it was read: never (it is read before the front end listens). */
export const unknownStoreId = (): never => {
  throw new Error('unreachable: the store id is read before the front end listens');
};
