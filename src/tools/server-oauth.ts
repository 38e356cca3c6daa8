/**
 * OAuth for one `http` server entry: its OAuth client (oauth/client.ts) and, with `oauth.per: principal`, its
 * principals' connections (mcp/principal-connections.ts). A runtime server's OAuth requests and principal connections
 * pass the runtime URL policy as its own do. A principal's connection sends the instance header too; its tool list
 * and notices are ignored (the server's own connection owns them).
 */
import type { HttpServerConfig } from '../config/schema.ts';
import { proxiedFetch } from '../egress/proxy.ts';
import { openConnection, type McpConnection } from './mcp/connection.ts';
import { INSTANCE_HEADER } from '../conversation/hops.ts';
import { createServerOAuth, type ServerOAuth } from './oauth/client.ts';
import { createPrincipalConnections } from './mcp/principal-connections.ts';
import { checkedFetch, pinnedConnect } from './spawn/runtime-connect.ts';
import type { PoolOptions, ServerEntry } from './mcp/server-entry.ts';

/** Gives `entry` (an http server with `oauth`) its OAuth client, and its principals' connections when it has them. */
export function attachOAuth(entry: ServerEntry, config: HttpServerConfig, deps: PoolOptions): void {
  const oauth = config.oauth;
  if (!oauth) return;
  const log = deps.log.child({ serverId: entry.name });
  const fetch = entry.runtime ? checkedFetch(deps.runtime) : proxiedFetch(globalThis.fetch, config.proxy, deps.env);
  const oauthOf = (principal?: string) =>
    createServerOAuth({
      serverId: entry.name,
      config: { ...config, oauth },
      store: deps.secrets,
      clock: deps.clock,
      log,
      callbackUrl: deps.callbackUrl,
      fetch,
      ...(principal !== undefined && { principal }),
    });
  entry.oauth = oauthOf();
  if (oauth.per !== 'principal') return;

  const open = async (principalOAuth: ServerOAuth, onLost: () => void): Promise<McpConnection> => {
    const pinned = entry.runtime ? await pinnedConnect(config, deps.runtime) : undefined;
    await principalOAuth.load();
    try {
      const connection = await openConnection({
        serverId: entry.name,
        config,
        log,
        clientInfo: deps.clientInfo,
        oauth: principalOAuth,
        onLost,
        onToolsChanged: () => {},
        ...(deps.instanceId !== undefined && { extraHeaders: { [INSTANCE_HEADER]: deps.instanceId } }),
        fetch: pinned?.fetch ?? proxiedFetch(globalThis.fetch, config.proxy, deps.env),
      });
      const close = connection.close.bind(connection);
      return Object.assign(connection, { close: () => close().finally(() => pinned?.close()) });
    } catch (err) {
      await pinned?.close();
      throw err;
    }
  };
  entry.principals = createPrincipalConnections({ serverId: entry.name, oauthOf, open, log, timeout: config.timeout });
}
