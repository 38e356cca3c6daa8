/**
 * The calls of a server with `oauth.per: principal` (docs/tool-servers.md): each principal's go over its own
 * connection with its own tokens; the server's own connection only lists tools.
 * - `connection(principal)` opens on first use; no principal, or one without tokens, gets a CallError (the latter
 *   naming where it signs in; nothing is sent); a failed opening gets the reason and the next call tries again; a
 *   lost one is dropped.
 * - `signIn` answers the URL to follow (the same while fresh) with a new `binding` that only the caller gets and
 *   `complete` needs, or `signedIn: true`; it offers a sign-in again past `oauth.maxSignIns`. `status` tells which,
 *   sending nothing. After `complete` the next call uses the new tokens.
 * - `signOut` drops the tokens and the connection; `closeAll` closes every connection, keeping the tokens.
 */
import type { Logger } from '../../log/index.ts';
import { CallError, describe } from './call-error.ts';
import type { McpConnection } from './connection.ts';
import type { ServerOAuth } from '../oauth/client.ts';
import { AuthorizationRequired } from '../oauth/sign-in-errors.ts';
import type { SignInBegun, SignInRecord } from '../messages.ts';

/** `authorizationUrl`: while a sign-in of the principal is pending, where it signs in. */
type SignInStatus = Omit<SignInRecord, 'serverId'>;

export interface PrincipalConnectionsOptions {
  serverId: string;
  /** The OAuth client of one principal (its own record). */
  oauthOf(principal: string): ServerOAuth;
  /** Opens a connection authorized by `oauth`; `onLost` when it dies on its own. */
  open(oauth: ServerOAuth, onLost: () => void): Promise<McpConnection>;
  log: Logger;
  /** The server's request timeout (named in a timed-out attempt's reason). */
  timeout: number;
}

export type PrincipalConnections = ReturnType<typeof createPrincipalConnections>;

export function createPrincipalConnections(options: PrincipalConnectionsOptions) {
  const oauths = new Map<string, ServerOAuth>();
  const connections = new Map<string, Promise<McpConnection>>();

  const oauthOf = (principal: string): ServerOAuth => {
    let oauth = oauths.get(principal);
    if (!oauth) oauths.set(principal, (oauth = options.oauthOf(principal)));
    return oauth;
  };
  const forgetIf = (principal: string, opening: Promise<McpConnection>) => {
    if (connections.get(principal) === opening) connections.delete(principal);
  };
  /** One opening at a time per principal: concurrent calls share it. */
  const opened = (principal: string, oauth: ServerOAuth): Promise<McpConnection> => {
    const existing = connections.get(principal);
    if (existing) return existing;
    const opening: Promise<McpConnection> = options
      .open(oauth, () => forgetIf(principal, opening))
      .catch((err: unknown) => {
        forgetIf(principal, opening);
        throw err;
      });
    connections.set(principal, opening);
    return opening;
  };
  const close = async (principal: string) => {
    const opening = connections.get(principal);
    connections.delete(principal);
    await opening?.then((c) => c.close()).catch(() => {});
  };

  return {
    async connection(principal: string | undefined): Promise<McpConnection> {
      if (principal === undefined)
        throw new CallError(
          "this server's tools act for a principal (oauth.per: principal), and this call has none",
          'protocol',
        );
      const oauth = oauthOf(principal);
      if (!connections.has(principal)) {
        await oauth.load();
        if (!oauth.signedIn())
          throw new CallError(new AuthorizationRequired(options.serverId, principal).message, 'protocol');
      }
      try {
        return await opened(principal, oauth);
      } catch (err) {
        throw new CallError(oauth.blocked()?.message ?? describe(err, options.timeout), 'protocol');
      }
    },
    async status(principal: string): Promise<SignInStatus> {
      const oauth = oauthOf(principal);
      await oauth.load();
      const url = oauth.authorizationUrl();
      return { signedIn: oauth.signedIn(), ...(url !== undefined && { authorizationUrl: url }) };
    },
    async signIn(principal: string): Promise<Omit<SignInBegun, 'serverId'>> {
      const oauth = oauthOf(principal);
      await oauth.resetSignIns(); // asked for by the principal itself: offered again after oauth.maxSignIns
      await oauth.load();
      /** The pending sign-in's URL, bound to this caller. */
      const begun = async (url: string) => {
        const binding = await oauth.bind();
        return { signedIn: oauth.signedIn(), authorizationUrl: url, ...(binding && { binding }) };
      };
      const pending = oauth.authorizationUrl();
      if (pending !== undefined) return begun(pending);
      try {
        await opened(principal, oauth);
        return { signedIn: true };
      } catch (err) {
        // The attempt without (usable) tokens met the server's sign-in wall: it left a pending sign-in.
        const url = oauth.authorizationUrl();
        if (url !== undefined) return begun(url);
        throw new Error(oauth.blocked()?.message ?? describe(err, options.timeout));
      }
    },
    async complete(principal: string, state: string, code: string, iss?: string, binding?: string): Promise<void> {
      await oauthOf(principal).complete(state, code, iss, binding);
      await close(principal);
      options.log.info('OAuth: a principal signed in');
    },
    async signOut(principal: string): Promise<void> {
      await close(principal);
      await oauthOf(principal).forget();
    },
    async closeAll(): Promise<void> {
      await Promise.all([...connections.keys()].map(close));
    },
  };
}
