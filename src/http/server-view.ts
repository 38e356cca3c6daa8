/**
 * What a principal without the `admin` scope sees of a tool server's record (REST `GET /api/mcp/servers` and
 * `mcpServerStatus` frames): its status, and for an error a generic text. The error itself (a stdio server's
 * stderr, an address, an OAuth detail) and the OAuth sign-in URL (whoever follows it picks the account the server
 * acts for) are for admins only.
 */
import type { ServerRecord } from '../tools/messages.ts';

export const SERVER_ERROR_SHOWN = 'the tool server is unavailable (admins see why: its record, the log)';

type Shown = Pick<ServerRecord, 'error' | 'instances' | 'authorizationUrl'>;

/** The record as a non-admin principal sees it. */
export function serverForNonAdmin<R extends Shown>({ authorizationUrl: _, ...record }: R): Omit<R, 'authorizationUrl'> {
  return {
    ...record,
    ...(record.error !== undefined && { error: SERVER_ERROR_SHOWN }),
    ...(record.instances && {
      instances: record.instances.map((i) => ({ ...i, ...(i.error !== undefined && { error: SERVER_ERROR_SHOWN }) })),
    }),
  };
}
