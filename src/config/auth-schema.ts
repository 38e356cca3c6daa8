/** `server.auth`: who may call (shorthand keys, named keys with scopes, JWTs). */
import { z } from 'zod';

/** What a principal may do (src/auth): `chat` (messages, sessions, approvals), `inspect` (/inspect/ws, /metrics, /api/config.yaml), `schedule` (/api/schedules), `admin` (everything). */
export const AUTH_SCOPES = ['chat', 'inspect', 'schedule', 'admin'] as const;

const authKeySchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[\w.@-]+$/, 'letters, digits and _ . @ - only')
    .refine((name) => !name.startsWith('@'), 'may not start with "@" (memory\'s reserved owners: @shared, @unnamed)')
    .describe(
      "The principal's name: shown in logs (never the key) and owning the key's sessions; unique (`api` and `admin` are the shorthands').",
    ),
  key: z
    .string()
    .min(16)
    .describe('The bearer secret, e.g. `$CI_KEY`: at least 16 characters (use 32 or more random ones).'),
  scopes: z
    .array(z.enum(AUTH_SCOPES))
    .min(1)
    .describe(
      'What the key may do: `chat` (messages, its own sessions, their approvals), `inspect` (`/inspect/ws`, `/metrics`, `/api/config.yaml`), `schedule` (`/api/schedules`: its own schedules), `admin` (everything).',
    ),
});

const authJwtSchema = z
  .strictObject({
    issuer: z.string().min(1).describe('The `iss` every token must carry.'),
    audience: z.string().min(1).describe('The `aud` every token must carry.'),
    jwksUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        'Where the key set is fetched (`http:` or `https:`; refetched on an unknown `kid` at most once per `jwksCooldownMs`; 5 s timeout, 256 KiB at most).',
      ),
    jwksFile: z
      .string()
      .min(1)
      .optional()
      .describe("A JSON Web Key Set file, read at start; relative to the agent file's folder."),
    subjectClaim: z.string().min(1).default('sub').describe('The claim naming the principal (`jwt:<value>`).'),
    scopesClaim: z
      .string()
      .min(1)
      .default('scope')
      .describe('The claim with the scopes: a space-separated string or an array; unknown names are ignored.'),
    algorithms: z
      .array(z.string().min(1))
      .min(1)
      .default(['RS256', 'ES256'])
      .describe('The signature algorithms accepted.'),
    jwksCooldownMs: z
      .number()
      .int()
      .nonnegative()
      .default(30_000)
      .describe('The least time between two fetches of `jwksUrl`, in ms.'),
  })
  .refine((j) => (j.jwksUrl === undefined) !== (j.jwksFile === undefined), {
    message: 'set exactly one of jwksUrl and jwksFile',
  })
  .describe(
    'Bearer JSON Web Tokens verified against a JSON Web Key Set: set exactly one of `jwksUrl` and `jwksFile`. The principal is `jwt:<subject>`.',
  );

export const authSchema = z
  .strictObject({
    apiKey: z
      .string()
      .min(16)
      .optional()
      .describe(
        'Shorthand for a key named `api` of scope `chat` only (with it alone nobody reads `/metrics` or connects servers: add an `inspect` or `admin` key); its sessions keep plain ids. At least 16 characters.',
      ),
    adminKey: z
      .string()
      .min(16)
      .optional()
      .describe(
        'Shorthand for a key named `admin` of scope `admin`; alone, it leaves `chat` open to every caller. While only the shorthands are set, answering approvals needs it. At least 16 characters.',
      ),
    keys: z
      .array(authKeySchema)
      .default([])
      .describe("Named bearer keys with their scopes; each key's sessions are its own."),
    jwt: authJwtSchema.optional(),
  })
  .superRefine((auth, ctx) => {
    const taken = new Set([
      ...(auth.apiKey === undefined ? [] : ['api']),
      ...(auth.adminKey === undefined ? [] : ['admin']),
    ]);
    auth.keys.forEach((k, i) => {
      if (taken.has(k.name))
        ctx.addIssue({
          code: 'custom',
          path: ['keys', i, 'name'],
          message: `key name "${k.name}" is used twice (apiKey is "api", adminKey is "admin")`,
        });
      taken.add(k.name);
    });
  })
  .describe(
    'Who may call. With no key and no JWT every request may do everything (one local user); with any, requests send `Authorization: Bearer <key or token>` (WebSocket upgrades may use `?token=`).',
  );
export type AuthConfig = z.output<typeof authSchema>;
