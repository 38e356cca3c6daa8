import { z } from 'zod';

/** JWS algorithms of a `private_key_jwt` client assertion (RFC 7523). */
const JWT_SIGNING_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/** OAuth 2.1 for an `http` server (docs/tool-servers.md, "OAuth-protected tool servers"). */
export const oauthSchema = z
  .strictObject({
    grant: z
      .enum(['authorization_code', 'client_credentials'])
      .default('authorization_code')
      .describe(
        '`authorization_code`: a person (an admin) signs in once in a browser, with PKCE; `client_credentials`: machine to machine, with `clientId` and `clientSecret` or `privateKey`.',
      ),
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A client registered with the authorization server beforehand. Default: dynamic client registration (RFC 7591) as a public client.',
      ),
    clientSecret: z
      .string()
      .min(1)
      .optional()
      .describe("That client's secret when it is confidential, e.g. `$NOTES_SECRET` (redacted everywhere)."),
    privateKey: z
      .string()
      .min(1)
      .optional()
      .describe(
        "That client's private key (PKCS #8 PEM), e.g. `$NOTES_SIGNING_KEY`: it authenticates to the token endpoint with a JWT signed by it (`private_key_jwt`, RFC 7523) instead of a secret. Redacted everywhere.",
      ),
    privateKeyFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The same key read from a file (relative to the agent file's folder), at each token request, so a rotated key needs no restart. Agent files only: a server connected at runtime sends `privateKey`.",
      ),
    signingAlgorithm: z
      .enum(JWT_SIGNING_ALGORITHMS)
      .optional()
      .describe(
        "The JWS algorithm of those JWTs. Default: the key's own (`RS256` for RSA, `ES256`/`ES384`/`ES512` for the P-256/P-384/P-521 curves, `EdDSA` for Ed25519).",
      ),
    clientMetadataUrl: z
      .url({ protocol: /^https$/ })
      .optional()
      .describe(
        'The `https:` URL of a client ID metadata document describing agentd (its `client_id` is this URL, its `redirect_uris` list `redirectUrl`): an authorization server that advertises `client_id_metadata_document_supported` gets it as the `client_id`, with no registration. Others: `clientId`, else dynamic registration.',
      ),
    scopes: z
      .array(z.string().min(1))
      .optional()
      .describe("Scopes to ask for. Default: the scopes the server's metadata lists."),
    redirectUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        'Where the browser returns from signing in (`http:` or `https:`); set it when agentd is reached through another name, the same for every instance behind one load balancer. Default: `http://127.0.0.1:<port>/api/oauth/callback`.',
      ),
    per: z
      .enum(['server', 'principal'])
      .default('server')
      .describe(
        "Whose tokens the tool calls carry. `server`: one sign-in (an admin's) for everyone. `principal`: each principal signs in for itself (`POST /api/mcp/servers/{serverId}/sign-in`, or the console) and its sessions' tool calls carry its own tokens; the server's own sign-in (an admin's) still lists its tools, resources and prompts. `authorization_code` only.",
      ),
    maxSignIns: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(3)
      .describe(
        'Sign-ins in a row whose tokens the server still refuses (it keeps asking for a scope the authorization server does not grant, say) before agentd stops offering another: the server is then in `error` saying so, without a sign-in URL, until it is restarted (`POST /api/mcp/servers/{serverId}/restart`). A connection or a tool call that succeeds ends the row.',
      ),
  })
  .refine(
    (o) =>
      o.grant !== 'client_credentials' ||
      (o.clientId !== undefined &&
        (o.clientSecret !== undefined || o.privateKey !== undefined || o.privateKeyFile !== undefined)),
    { message: 'grant client_credentials needs clientId and clientSecret (or privateKey)' },
  )
  .refine((o) => [o.clientSecret, o.privateKey, o.privateKeyFile].filter((v) => v !== undefined).length <= 1, {
    message: 'give one of clientSecret, privateKey and privateKeyFile',
  })
  .refine((o) => o.per === 'server' || o.grant === 'authorization_code', {
    message: 'per: principal needs the authorization_code grant (each principal signs in as a person)',
    path: ['per'],
  })
  .refine((o) => (o.privateKey === undefined && o.privateKeyFile === undefined) || o.clientId !== undefined, {
    message: 'privateKey needs the clientId it was registered for',
    path: ['clientId'],
  })
  .describe(
    'OAuth 2.1 for a server that asks for it (its `401` names its protected resource metadata): agentd discovers the authorization server, registers itself unless `clientId` is given, and keeps the tokens in the storage medium, never in the config.',
  );
export type OAuthConfig = z.output<typeof oauthSchema>;
