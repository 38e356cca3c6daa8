/**
 * What servers say on their own, passed on: logs to agentd's log (pino, with the server's name and
 * level) and as `mcp.serverLog` events; resource updates and list changes as events.
 *
 * Contracts:
 * - A log's `data` is redacted, and cut to at most {@link MAX_LOG_DATA} characters of JSON (then it
 *   is that text with a marker), so a chatty or hostile server cannot flood the log or the clients.
 * - MCP levels map to pino's: debug → debug; info, notice → info; warning → warn; error and worse → error.
 */
import type { Redactor } from '../../config/redact.ts';
import type { McpLogLevel } from '../../config/server-features.ts';
import type { Logger } from '../../log/index.ts';
import type { McpBus } from './server-entry.ts';
import type { ServerNotice } from './server-features.ts';

export const MAX_LOG_DATA = 8 * 1024;

const PINO_LEVEL: Record<McpLogLevel, 'debug' | 'info' | 'warn' | 'error'> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

function bounded(data: unknown): unknown {
  const text = JSON.stringify(data) ?? 'null';
  return text.length <= MAX_LOG_DATA
    ? data
    : `${text.slice(0, MAX_LOG_DATA)}… [cut by agentd: ${text.length} characters]`;
}

export function createNoticeRelay(bus: McpBus, redactor: Redactor) {
  return (serverId: string, log: Logger, notice: ServerNotice): void => {
    switch (notice.type) {
      case 'log': {
        const data = redactor.deep(bounded(notice.data));
        const logger = notice.logger === undefined ? {} : { logger: notice.logger };
        log[PINO_LEVEL[notice.level]]({ serverId, mcpLevel: notice.level, ...logger, data }, 'MCP server log');
        bus.emit('mcp.serverLog', { serverId, level: notice.level, ...logger, data });
        return;
      }
      case 'resourceUpdated':
        bus.emit('mcp.resourceUpdated', { serverId, uri: notice.uri });
        return;
      case 'listChanged':
        bus.emit('mcp.listChanged', { serverId, list: notice.list });
        return;
    }
  };
}
