import type { Handler } from './forwarding.ts';
import { isAppError } from '../errors/index.ts';
import type { ClusterRegistry } from './medium.ts';
import type { ClusterShared } from './shared.ts';
import {
  readWire,
  toolServerChange,
  toolServerChangeMessage,
  toolServerStatus,
  type ToolServerChange as Change,
  type ToolServerStatus,
} from './wire.ts';

/** A tool server's record as `mcp.listServers` gives it (the fields this module reads and adds). */
type Listed = ToolServerStatus & { name: string };
type InstanceStatus = ToolServerStatus & { instanceId: string };

/** The command that applies a change here. */
function commandFor(change: Change): { name: string; payload: unknown } {
  if (change.op === 'remove') return { name: 'mcp.removeServer', payload: { serverId: change.name } };
  if (change.op === 'restart') return { name: 'mcp.restartServer', payload: { serverId: change.name } };
  const name = change.kind === 'a2a' ? 'mcp.connectA2aAgent' : 'mcp.connectServer';
  return { name, payload: { name: change.name, config: change.config } };
}

/** The change a connect (`command`: `mcp.connectServer` or `mcp.connectA2aAgent`) of `server` shares. */
function connectChange(command: string, server: string, config: unknown): Change {
  return { op: 'connect', name: server, config, ...(command === 'mcp.connectA2aAgent' && { kind: 'a2a' as const }) };
}

/** An instance's status hash: each server's status (and error) as JSON, by server name. */
function statusFields(servers: Listed[]): Record<string, string> {
  const json = (s: Listed) => JSON.stringify({ status: s.status, ...(s.error !== undefined && { error: s.error }) });
  return Object.fromEntries(servers.map((s) => [s.name, json(s)]));
}

/** Every instance's statuses (hashes `read` parses; unreadable ones skipped), by server name. */
function byServer(
  all: readonly (readonly [string, Record<string, string>])[],
  read: (json: string, instance: string) => ToolServerStatus | undefined,
): Map<string, InstanceStatus[]> {
  const servers = new Map<string, InstanceStatus[]>();
  for (const [instance, statuses] of all) {
    for (const [name, json] of Object.entries(statuses)) {
      const parsed = read(json, instance);
      if (!parsed) continue;
      const list = servers.get(name) ?? [];
      list.push({ instanceId: instance, ...parsed });
      servers.set(name, list);
    }
  }
  return servers;
}

/**
 * Runtime tool-server changes shared by every instance over one medium, recorded in its registry (Redis or Postgres).
 * - A connect after which the server is listed here, and a successful remove or restart, are published; every
 *   other instance applies them through its own handler (its own spawn and URL policy), logging failures.
 *   Connects and removes are also recorded, so `join()` brings a later instance up to them.
 * - `mcp.listServers` adds `instances`: each server's status on every instance heard from in the last `2 × leaseMs`.
 */
export function createToolServerSync(options: ClusterShared & { registry: ClusterRegistry }) {
  const { medium, registry, keyPrefix, instanceId, leaseMs, clock, ids, log } = options;
  const channel = `${keyPrefix}mcp`;
  const local = new Map<string, Handler>();
  const run = (name: string, payload: unknown) => {
    const id = ids();
    return (local.get(name) as Handler)({ id, ts: clock.now(), correlationId: id, name, payload });
  };
  const listedHere = async (name: string) =>
    ((await run('mcp.listServers', {})) as Listed[]).some((s) => s.name === name);

  async function share(change: Change): Promise<void> {
    const recorded = change.op === 'restart' ? undefined : JSON.stringify(change);
    if (recorded) await registry.recordChange(change.name, recorded);
    await medium.publish(channel, JSON.stringify({ from: instanceId, change }));
  }

  async function apply(change: Change): Promise<void> {
    try {
      const { name, payload } = commandFor(change);
      await run(name, payload);
    } catch (err) {
      log.warn(
        { err: isAppError(err) ? err.message : err, change: change.op, server: change.name },
        'applying a tool-server change from another instance failed',
      );
    }
  }

  /** The statuses of every live instance, by server name. */
  async function statusesByServer(): Promise<Map<string, InstanceStatus[]>> {
    const all = await registry.liveStatuses(leaseMs);
    return byServer(all, (json, instance) => readWire(toolServerStatus, json, `status of ${instance}`, log));
  }

  /** Writes this instance's statuses and marks it alive at once (a listing never sees them half rewritten). */
  const publishStatus = (servers: Listed[], replace: boolean): Promise<void> =>
    registry.writeStatuses(instanceId, statusFields(servers), replace, leaseMs);

  return {
    /** Wraps the tool-server commands: changes are shared, listings gain `instances`. */
    wrap(name: string, handler: Handler): Handler {
      local.set(name, handler);
      switch (name) {
        case 'mcp.listServers':
          return async (command) => {
            const servers = (await handler(command)) as Listed[];
            const statuses = await statusesByServer().catch(() => undefined); // Redis away: this instance's view alone
            return statuses ? servers.map((s) => ({ ...s, instances: statuses.get(s.name) ?? [] })) : servers;
          };
        case 'mcp.connectServer':
        case 'mcp.connectA2aAgent':
          return async (command) => {
            const { name: server, config } = command.payload as { name: string; config: unknown };
            const shareIfListed = async () => {
              if (await listedHere(server)) await share(connectChange(name, server, config));
            };
            try {
              const result = await handler(command);
              await shareIfListed();
              return result;
            } catch (err) {
              await shareIfListed().catch(() => undefined);
              throw err;
            }
          };
        case 'mcp.removeServer':
        case 'mcp.restartServer':
          return async (command) => {
            const result = await handler(command);
            const { serverId } = command.payload as { serverId: string };
            await share({ op: name === 'mcp.removeServer' ? 'remove' : 'restart', name: serverId });
            return result;
          };
        default:
          return handler;
      }
    },
    /** Applies a change another instance published. */
    onMessage: (raw: string): void => {
      const message = readWire(toolServerChangeMessage, raw, channel, log);
      if (message && message.from !== instanceId) void apply(message.change);
    },
    /** Brings a starting instance up to the recorded changes. */
    async join(): Promise<void> {
      const recorded = (await registry.changes()).map((json) =>
        readWire(toolServerChange, json, 'recorded tool-server changes', log),
      );
      for (const change of recorded) {
        if (!change) continue;
        const listed = await listedHere(change.name);
        if ((change.op === 'connect' && !listed) || (change.op === 'remove' && listed)) await apply(change);
      }
    },
    /** This instance's status of one server changed. */
    statusChanged(server: Listed): void {
      publishStatus([server], false).catch(() => undefined); // Redis away: the next heartbeat writes it
    },
    /** Rewrites every status of this instance and keeps it listed as alive. */
    async heartbeat(): Promise<void> {
      await publishStatus((await run('mcp.listServers', {})) as Listed[], true);
    },
    channel,
  };
}
