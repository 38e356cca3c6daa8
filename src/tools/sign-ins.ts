/**
 * The sign-in commands (docs/tool-servers.md): the browser's return from a sign-in (`mcp.oauthCallback`) and a
 * principal's own sign-in (`mcp.signIn`, `mcp.signInStatus`, `mcp.signOut`; mcp/principal-connections.ts).
 * - The callback finds server and principal by `state` (oauth/record.ts). The server's own sign-in reconnects it and
 *   resolves once connected; a principal's resolves at once, only with the `binding` its sign-in gave its starter.
 *   An unknown, expired or used state, or a principal's sign-in without its binding, is INVALID_REQUEST
 *   (`details.field: "state"`; `details.reason: "unbound"` for the latter) and stores nothing; a failed exchange
 *   AGENT_ERROR.
 * - A principal's commands on a server without `oauth.per: principal` are INVALID_REQUEST; unknown server
 *   SERVER_NOT_FOUND.
 */
import { AppError, messageOf } from '../errors/index.ts';
import { principalOfState, serverOfState } from './oauth/record.ts';
import { UnboundSignIn, UnknownSignIn } from './oauth/sign-in-errors.ts';
import type { McpCommands, SignInBegun, SignInRecord, ServerRecord } from './messages.ts';
import type { ServerEntry } from './mcp/server-entry.ts';
import type { ServerPool } from './server-pool.ts';

type OAuthCallback = McpCommands['mcp.oauthCallback'];
type PrincipalPayload = McpCommands['mcp.signIn']['payload'];

export interface SignInDeps extends Pick<ServerPool, 'find' | 'mustFind' | 'record'> {
  /** The server's own sign-in completed: reconnect it; resolves with its record once connected (AGENT_ERROR else). */
  reconnect(entry: ServerEntry): Promise<ServerRecord>;
}

export function createSignIns(deps: SignInDeps) {
  /** The principal connections of a server each principal signs in to. */
  const perPrincipal = (serverId: string) => {
    const entry = deps.mustFind(serverId);
    if (!entry.principals) {
      const how = entry.oauth
        ? "once for everyone (oauth.per: server): an admin signs in at its record's authorizationUrl"
        : 'without OAuth';
      throw new AppError('INVALID_REQUEST', `MCP server "${entry.name}" is signed in ${how}`, {
        serverId: entry.name,
        field: 'serverId',
      });
    }
    return { entry, principals: entry.principals };
  };
  const failed = (entry: ServerEntry, err: unknown) =>
    new AppError('AGENT_ERROR', `Signing in to MCP server "${entry.name}" failed: ${messageOf(err)}`, {
      serverId: entry.name,
      reason: messageOf(err),
    });

  return {
    async callback(payload: OAuthCallback['payload']): Promise<OAuthCallback['result']> {
      const serverId = serverOfState(payload.state);
      const principal = principalOfState(payload.state);
      const entry = serverId === undefined ? undefined : deps.find(serverId);
      const unknown = () => new AppError('INVALID_REQUEST', new UnknownSignIn().message, { field: 'state' });
      if (!entry?.oauth || (principal !== undefined && !entry.principals)) throw unknown();
      try {
        if (principal === undefined) await entry.oauth.complete(payload.state, payload.code, payload.iss);
        else await entry.principals!.complete(principal, payload.state, payload.code, payload.iss, payload.binding);
      } catch (err) {
        if (err instanceof UnknownSignIn) throw unknown();
        if (err instanceof UnboundSignIn)
          throw new AppError('INVALID_REQUEST', err.message, { field: 'state', reason: 'unbound' });
        throw failed(entry, err);
      }
      return principal === undefined
        ? { server: await deps.reconnect(entry) }
        : { server: deps.record(entry), principal };
    },
    async signIn({ serverId, principal }: PrincipalPayload): Promise<SignInBegun> {
      const { entry, principals } = perPrincipal(serverId);
      try {
        return { serverId: entry.name, ...(await principals.signIn(principal)) };
      } catch (err) {
        throw failed(entry, err);
      }
    },
    async status({ serverId, principal }: PrincipalPayload): Promise<SignInRecord> {
      const { entry, principals } = perPrincipal(serverId);
      return { serverId: entry.name, ...(await principals.status(principal)) };
    },
    async signOut({ serverId, principal }: PrincipalPayload): Promise<SignInRecord> {
      const { entry, principals } = perPrincipal(serverId);
      await principals.signOut(principal);
      return { serverId: entry.name, signedIn: false };
    },
  };
}
