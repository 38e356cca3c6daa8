/** `server.limits`: rate limits, caps and body sizes (every limit is here, so load tests raise them without code changes). */
import { z } from 'zod';
import { unnamedSessionsSchema } from './unnamed-sessions.ts';

const windowLimit = (points: number) =>
  z.strictObject({
    points: z.number().int().positive().default(points).describe('What the window allows.'),
    durationSec: z.number().int().positive().default(60).describe("The window's length, in seconds."),
  });

export const limitsSchema = z.strictObject({
  /** REST requests per IP per window. */
  rest: windowLimit(100)
    .prefault({})
    .describe(
      'HTTP requests per client IP per window (`/api`, `/mcp`, `/a2a`, WebSocket upgrades; refused ones count too).',
    ),
  /** WebSocket messages per connection per window. */
  ws: windowLimit(50).prefault({}).describe('WebSocket messages per connection per window.'),
  /**
   * WebSocket messages per IP per `ws` window, across all its connections (default 10 × `ws.points`), so
   * reconnecting does not start a fresh window.
   */
  wsPerIp: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'WebSocket messages per client IP per `ws` window, across all its connections (reconnecting does not start a fresh window). Default: 10 × `ws.points`.',
    ),
  /** Where the request and message windows are counted: `redis` shares them across every instance (default when `storage` is Redis). */
  store: z
    .enum(['memory', 'redis'])
    .optional()
    .describe(
      'Where the REST and WebSocket-per-IP windows are counted: `redis` shares them across every instance (it needs `storage.type: redis`). Default: `redis` when `storage.type` is `redis`, else `memory`.',
    ),
  /**
   * Sessions one principal may hold (anonymous callers: per IP); one more answers 429 until one is
   * deleted. Admin principals are not capped. See SECURITY.md, "Caps per principal".
   */
  sessionsPerPrincipal: z
    .number()
    .int()
    .positive()
    .default(1000)
    .describe(
      'Sessions one principal may hold (without auth: per client IP; admin principals are not capped); one more answers 429 until one is deleted. Unnamed sessions (`unnamedSessions`) are not counted.',
    ),
  unnamedSessions: unnamedSessionsSchema.prefault({}),
  /** Concurrent connections per IP: HTTP connections (idle keep-alives too) and, apart from them, WebSockets. */
  connectionsPerIp: z
    .number()
    .int()
    .positive()
    .default(10)
    .describe(
      'Concurrent connections per client IP, counted by each instance: at most this many HTTP connections (idle keep-alives included; one more is closed unanswered; peers in `trustedProxies` are not counted) and, apart from them, at most this many WebSockets (one more upgrade is answered 429; behind a trusted proxy, per forwarded client).',
    ),
  /** Largest message body (the message endpoints, /mcp) or WebSocket frame, in bytes (10 MB image + JSON overhead). */
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(14 * 1024 * 1024)
    .describe(
      'Largest message body (`message-sync`, `message`, `/mcp`, `/a2a`) or WebSocket frame, in bytes (a 10 MiB image plus JSON); also how far a WebSocket reader may fall behind before it is closed (1008).',
    ),
  /** How long a WebSocket reader may leave its connection's send buffer full without taking any of it before it is closed (1008). */
  slowReaderMs: z
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe(
      "How long a WebSocket reader may leave frames waiting in agentd (its connection's buffer full) without taking any of them before it is closed with 1008, in ms.",
    ),
  /** Largest body of every other REST route (the control endpoints), in bytes. */
  maxJsonBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe('Largest body of every other REST route, in bytes.'),
  /**
   * Largest session import (`POST /api/sessions/import`: an export's NDJSON), in bytes. It is read
   * whole into memory and checked before anything is stored, as a session's log is when it opens.
   */
  maxImportBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024)
    .describe(
      'Largest session import (`POST /api/sessions/import`), in bytes; it is read whole and checked before anything is stored.',
    ),
});
