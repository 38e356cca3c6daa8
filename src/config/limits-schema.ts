/** `server.limits`: rate limits, caps and body sizes (every limit is here, so load tests raise them without code changes). */
import { z } from 'zod';
import { deliveriesLimitsSchema } from './deliveries-schema.ts';
import { optionalPositiveInt, positiveInt } from './numbers.ts';

const windowLimit = (points: number) =>
  z.strictObject({
    points: positiveInt(points).describe('What the window allows.'),
    durationSec: positiveInt(60).describe("The window's length, in seconds."),
  });

/** `server.limits.unnamedSessions` (see `UNNAMED_PREFIX` in src/session-id.ts). */
const unnamedSessionsSchema = z
  .strictObject({
    ttlMs: positiveInt(24 * 60 * 60 * 1000).describe(
      'How long an unnamed session may stay idle (no new event stored, no turn running, queued or waiting for a person) before it is deleted with its log, in ms.',
    ),
    sweepIntervalMs: z
      .number()
      .int()
      .min(100)
      .default(10 * 60 * 1000)
      .describe(
        'How often each instance lists the stored sessions for expired unnamed ones, in ms (the pause between the end of one sweep and the start of the next). A session is deleted at most this long after it expired.',
      ),
  })
  .describe(
    'Sessions a caller never named (an A2A message without `contextId`, a `/mcp` `chat_with_agent` without `sessionId`; their ids begin `unnamed-`): not counted toward `sessionsPerPrincipal`, and deleted once idle for `ttlMs`.',
  );

/** `server.limits.schedules`: what one principal's schedules may cost (src/schedules/caps.ts, docs/schedules.md). */
const scheduleLimitsSchema = z
  .strictObject({
    perPrincipal: positiveInt(20).describe(
      'Schedules one principal may hold (made over `/api/schedules`); one more answers 429 `RATE_LIMIT_EXCEEDED` until one is deleted.',
    ),
    minIntervalMs: positiveInt(1000).describe(
      "Shortest time between two fires of one schedule, in ms: a schedule whose `everyMs`, or whose cron expression's next ticks, come closer is refused 400 `INVALID_REQUEST` (`details.field`, `details.limit`), and a tick closer than this to the schedule's previous one is not fired.",
    ),
    maxMessageBytes: positiveInt(16 * 1024).describe(
      'Largest `message` of a schedule, in UTF-8 bytes (before its `{{...}}` are filled in); a longer one is refused 400 `INVALID_REQUEST`.',
    ),
    queuedRuns: z
      .number()
      .int()
      .min(0)
      .max(40)
      .default(5)
      .describe(
        "Runs an `overlap: queue` schedule may hold waiting for its previous run to end (every schedule, an admin's and the agent file's too); a tick past them is recorded `skipped` with reason `queueFull`. Deleting the schedule drops them.",
      ),
  })
  .describe(
    "Caps on the schedules of principals that are not admins (without auth: of every caller, counted per client IP). An admin's schedules and the agent file's are trusted as an admin's sessions are: not counted, not capped (but `queuedRuns` holds for them too); their sessions do not count toward `sessionsPerPrincipal`, while a capped schedule's do. Schedules already kept are held to the caps as they are now (after a restart, with caps lowered): one past them is suspended, kept but not fired (docs/schedules.md).",
  );

export const limitsSchema = z.strictObject({
  rest: windowLimit(100)
    .prefault({})
    .describe(
      'HTTP requests per client IP per window (`/api`, `/mcp`, `/a2a`, WebSocket upgrades; refused ones count too).',
    ),
  ws: windowLimit(50).prefault({}).describe('WebSocket messages per connection per window.'),
  wsPerIp: optionalPositiveInt().describe(
    'WebSocket messages per client IP per `ws` window, across all its connections (reconnecting does not start a fresh window). Default: 10 × `ws.points`.',
  ),
  store: z
    .enum(['memory', 'redis'])
    .optional()
    .describe(
      'Where the REST and WebSocket-per-IP windows are counted: `redis` shares them across every instance (it needs a Redis: `storage.type: redis`, or `storage.redis` beside PostgreSQL). Default: `redis` when there is one, else `memory`.',
    ),
  sessionsPerPrincipal: positiveInt(1000).describe(
    'Sessions one principal may hold (without auth: per client IP; admin principals are not capped); one more answers 429 until one is deleted. Unnamed sessions (`unnamedSessions`) are not counted.',
  ),
  unnamedSessions: unnamedSessionsSchema.prefault({}),
  schedules: scheduleLimitsSchema.prefault({}),
  connectionsPerIp: positiveInt(10).describe(
    'Concurrent connections per client IP, counted by each instance: at most this many HTTP connections (idle keep-alives included; one more is answered 429 and closed; peers in `trustedProxies` are not counted) and, apart from them, at most this many WebSockets (one more upgrade is answered 429; behind a trusted proxy, per forwarded client).',
  ),
  maxBodyBytes: positiveInt(14 * 1024 * 1024).describe(
    'Largest message body (`message-sync`, `message`, `/mcp`, `/a2a`) or WebSocket frame, in bytes (a 10 MiB image plus JSON).',
  ),
  slowReaderBytes: positiveInt(1024 * 1024).describe(
    'How many bytes may wait in agentd for one WebSocket reader (sent, not yet taken by its connection), checked as each frame is queued: a frame that finds more waiting is not queued and the reader is closed with 1008 `slow consumer: N bytes unread` (logged). agentd so holds at most this much plus one frame per reader. A reader that answers the close frame (or keeps taking bytes) within 2 s gets it; one that does not is cut.',
  ),
  slowReaderMs: positiveInt(10_000).describe(
    "How long a WebSocket reader may leave frames waiting in agentd (its connection's buffer full) without taking any of them before it is closed with 1008 (logged), in ms; below `slowReaderBytes` too.",
  ),
  maxJsonBytes: positiveInt(1024 * 1024).describe('Largest body of every other REST route, in bytes.'),
  maxImportBytes: positiveInt(64 * 1024 * 1024).describe(
    'Largest session import (`POST /api/sessions/import`), in bytes; it is read whole and checked before anything is stored.',
  ),
  deliveries: deliveriesLimitsSchema.prefault({}),
});
