/** `server.limits.unnamedSessions` (see `UNNAMED_PREFIX` in src/session-id.ts). */
import { z } from 'zod';
import { positiveInt } from './numbers.ts';

export const unnamedSessionsSchema = z
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
