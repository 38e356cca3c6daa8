/**
 * The agent card (`GET /.well-known/agent-card.json`), for A2A v1.0 and v0.3 clients alike (docs/a2a.md,
 * "Card and endpoints"). JSON-RPC is first in `supportedInterfaces`: the SDK's `ClientFactory` takes the first
 * it can speak.
 */
import { z } from 'zod';
import type { AgentConfig } from '../config/schema.ts';
import { hasCredentials } from '../config/shared.ts';

export const A2A_PATH = '/a2a';
/** The base of the HTTP+JSON binding (`POST /a2a/rest/message:send`, ...). */
export const A2A_REST_PATH = '/a2a/rest';
export const CARD_PATH = '/.well-known/agent-card.json';
/** The JWKS that verifies push notifications' JWTs (docs/a2a.md, "Push notifications"). */
export const JWKS_PATH = '/.well-known/jwks.json';
/** The request headers of A2A, allowed by the CORS preflight of its endpoints. */
export const A2A_HEADERS = ['Accept', 'A2A-Version', 'A2A-Extensions'];
/** A2A's own JSON media type, taken beside `application/json`. */
export const A2A_JSON = 'application/a2a+json';

/** A host[:port] as a client may name it (no path, user info or spaces). */
const HOST_RE = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;

/**
 * The origin the client used: the `Host` header (already checked by the admission chain); behind
 * `trustedProxies` (configured), `X-Forwarded-Host` / `X-Forwarded-Proto` when well-formed.
 */
export function endpointOrigin(headers: Record<string, string>, behindProxy: boolean): string {
  const first = (v: string | undefined) => v?.split(',')[0]?.trim() ?? '';
  const fwdHost = behindProxy ? first(headers['x-forwarded-host']) : '';
  const fwdProto = behindProxy ? first(headers['x-forwarded-proto']).toLowerCase() : '';
  const host = HOST_RE.test(fwdHost) ? fwdHost : HOST_RE.test(headers.host ?? '') ? headers.host! : 'localhost';
  const proto = fwdProto === 'https' || fwdProto === 'http' ? fwdProto : 'http';
  return `${proto}://${host}`;
}

const iface = z.object({ url: z.string(), protocolBinding: z.string(), protocolVersion: z.string() });
/** The card's published shape (OpenAPI, contract test): the members both versions read; the rest pass. */
export const agentCardSchema = z.looseObject({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  supportedInterfaces: z.array(iface),
  protocolVersions: z.array(z.string()),
  url: z.string().describe('v0.3: the JSON-RPC endpoint'),
  protocolVersion: z.string().describe('v0.3'),
  preferredTransport: z.literal('JSONRPC'),
  capabilities: z.object({ streaming: z.boolean(), pushNotifications: z.boolean() }).loose(),
  defaultInputModes: z.array(z.string()),
  defaultOutputModes: z.array(z.string()),
  skills: z.array(
    z.object({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) }).loose(),
  ),
  securitySchemes: z.record(z.string(), z.unknown()).optional(),
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
});

export function agentCard(
  config: Pick<AgentConfig, 'name' | 'description' | 'version' | 'a2a' | 'server'>,
  origin: string,
) {
  const url = `${origin}${A2A_PATH}`;
  const restUrl = `${origin}${A2A_REST_PATH}`;
  const secured = hasCredentials(config.server.auth);
  const skills = config.a2a.skills.map((s) => ({
    ...s,
    inputModes: ['text/plain', 'application/json'],
    outputModes: ['text/plain'],
  }));
  return {
    name: config.name,
    description: config.description ?? `${config.name}: a conversational agent with tools`,
    version: config.version,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: restUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: restUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ],
    protocolVersions: ['1.0', '0.3'],
    url,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC' as const,
    additionalInterfaces: [
      { url, transport: 'JSONRPC' },
      { url: restUrl, transport: 'HTTP+JSON' },
    ],
    capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
    // Text, data parts, and one inline image (src/a2a-face/message-parts.ts).
    defaultInputModes: ['text/plain', 'application/json', 'image/png', 'image/jpeg', 'image/gif', 'image/webp'],
    defaultOutputModes: ['text/plain'],
    skills,
    ...(secured && {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          httpAuthSecurityScheme: { scheme: 'bearer', description: 'An agentd key or JWT (server.auth)' },
        },
      },
      security: [{ bearer: [] }],
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    }),
  };
}
