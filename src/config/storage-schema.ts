/** `storage`: where session logs are kept (jsonl, memory or redis). */
import { z } from 'zod';
import { positiveInt } from './numbers.ts';

const maxSessionsInMemory = positiveInt(1000).describe(
  'Sessions held in memory at most: the least recently used idle one leaves first (idle ones leave after a minute anyway) and is read back from its log when used again.',
);

export const storageSchema = z.discriminatedUnion('type', [
  z
    .strictObject({
      type: z.literal('jsonl'),
      dir: z
        .string()
        .default('./data/sessions')
        .describe(
          "The sessions' folder: written in the file, relative to the file's folder; the default, relative to the working folder. One agentd at a time uses it (a second one exits 1 naming the first).",
        ),
      maxSessionsInMemory,
    })
    .describe("One append-only JSONL file per session; each event is written and fsync'd before its frame goes out."),
  z.strictObject({ type: z.literal('memory'), maxSessionsInMemory }).describe('Nothing is kept across restarts.'),
  z
    .strictObject({
      type: z.literal('redis'),
      url: z
        .url({ protocol: /^rediss?$/ })
        .describe(
          '`redis://` or `rediss://`, e.g. `redis://127.0.0.1:6379` (credentials are redacted in logs and the export).',
        ),
      keyPrefix: z
        .string()
        .default('agentd:')
        .describe(
          'Prefix of every key, so deployments can share one Redis; instances with the same `url` and prefix share sessions.',
        ),
      leaseMs: z
        .number()
        .int()
        .min(500)
        .default(10_000)
        .describe(
          'How long a session stays with an instance that stopped renewing its lease (it died) before another takes it over, in ms.',
        ),
      maxSessionsInMemory,
    })
    .describe('One Redis Stream per session; every instance sharing the Redis serves every session (see Scaling out).'),
]);
