/**
 * What servers say on their own, passed on: logs to agentd's log (MCP levels mapped to pino's) and as
 * `mcp.serverLog`; resource updates and list changes as events. A log's `data` is redacted and cut to
 * MAX_LOG_DATA characters of JSON, so a chatty or hostile server cannot flood the log or the clients.
 */
import type { Redactor } from '../../config/redact.ts';
import type { McpLogLevel } from '../../config/server-features.ts';
import type { Logger } from '../../log/index.ts';
import type { McpBus } from './server-entry.ts';
import type { ServerNotice } from './server-features.ts';

const MAX_LOG_DATA = 8 * 1024;

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
