/**
 * The event store's writes: each one call of a schema function (schema-v1.ts), so one atomic statement holding the
 * session row's lock only while it runs. An append carrying a fencing token is refused, nothing written, unless the
 * token is the session row's (`fenced.ts`).
 */
import { isoNow } from '../../clock.ts';
import { fencedError } from '../fenced.ts';
import { eventJson, logJsons, sessionExists, storedEvent } from '../stored-event.ts';
import { turnOf } from '../turn-index.ts';
import type { EventStore, StoreEvent } from '../types.ts';
import { keyBytes, ownerOfKey } from './queries.ts';
import type { StoreContext } from './store-context.ts';

type Writes<E extends StoreEvent> = Pick<EventStore<E>, 'append' | 'create' | 'delete' | 'markOpenTurn'>;

export function eventWrites<E extends StoreEvent>(ctx: StoreContext<E>): Writes<E> {
  const { query, ofSession, guard } = ctx;
  return {
    append(sessionId, events, fence) {
      return ofSession(sessionId, async () => {
        if (events.length === 0) return [];
        const jsons = events.map(eventJson);
        const ts = isoNow(ctx.clock);
        const [row] = await query<{ last: string }>('append', {
          text: 'SELECT @.agentd_append($1, $2, $3, $4, $5, $6, $7) AS last',
          values: [
            keyBytes(sessionId),
            ownerOfKey(sessionId),
            fence ?? null,
            ts,
            events.map((e) => e.type),
            events.map((e) => turnOf(e) ?? ''),
            jsons,
          ],
        });
        const last = Number(row?.last);
        if (last < 0) throw fencedError(sessionId, fence ?? 0);
        const first = last - jsons.length + 1;
        return jsons.map((json, i) => storedEvent<E>(first + i, ts, sessionId, json));
      });
    },

    async create(sessionId, entries) {
      guard(sessionId);
      const jsons = logJsons(entries);
      return ofSession(sessionId, async () => {
        if (jsons.length === 0) return [];
        const [row] = await query<{ last: string }>('create', {
          text: 'SELECT @.agentd_create($1, $2, $3, $4, $5, $6, $7) AS last',
          values: [
            keyBytes(sessionId),
            ownerOfKey(sessionId),
            entries.map((e) => e.seq),
            entries.map((e) => e.ts),
            entries.map((e) => e.event.type),
            entries.map((e) => turnOf(e.event) ?? ''),
            jsons,
          ],
        });
        if (Number(row?.last) < 0) throw sessionExists(sessionId);
        return jsons.map((json, i) => storedEvent<E>(entries[i]!.seq, entries[i]!.ts, sessionId, json));
      });
    },

    delete(sessionId) {
      return ofSession(sessionId, async () => {
        const text = 'SELECT @.agentd_delete($1) AS deleted';
        const [row] = await query<{ deleted: boolean }>('delete', { text, values: [keyBytes(sessionId)] });
        return row?.deleted === true;
      });
    },

    markOpenTurn(sessionId, open) {
      return ofSession(sessionId, async () => {
        const text = open
          ? 'INSERT INTO @.agentd_open_turns (session_id) VALUES ($1) ON CONFLICT DO NOTHING'
          : 'DELETE FROM @.agentd_open_turns WHERE session_id = $1';
        await query('markOpenTurn', { text, values: [keyBytes(sessionId)] });
      });
    },
  };
}
