/**
 * Which protocol era a tool server speaks, and what a failed connection attempt says about it. The SDK v2
 * client negotiates the era (`versionNegotiation`); this file adds what a host needs around it: the modes of
 * `mcpServers.<name>.protocolVersion`, and the next attempt after a failed one, decided from error codes and
 * structured fields only (never from an error's text).
 *
 * Contracts:
 * - `auto` probes with `server/discover` (the SDK's `'auto'`): a 2026-07-28 server is spoken to in its era
 *   however it refuses `initialize`; anything else falls back to `initialize`. `2025-11-25` speaks the 2025
 *   era only (the SDK's `'legacy'`, byte-identical to a 2025 client), `2026-07-28` that era only (`pin`).
 * - `nextAttempt` after a failed attempt, under `auto`: the 2026-07-28 era (`pin`) when the server refused
 *   the 2025-era `initialize` with -32022, -32020 or -32601 (a JSON-RPC error, or the JSON-RPC body of an
 *   HTTP 4xx) or answered it with a 2026-07-28 `protocolVersion` (the probe could not tell: a stdio server
 *   too slow to answer it in time); the 2025 era (`legacy`) after an attempt whose probe failed
 *   (`EraNegotiationFailed`) or whose stdio child went away (a server that exits on a request it does not
 *   know: the SDK probes in place on agentd's own stdio transport). Under `auto` and `2025-11-25`: the SSE
 *   transport after a 2025-era Streamable HTTP attempt refused with an HTTP 4xx of another kind. Otherwise none: an
 *   abandoned attempt, a timeout and a sign-in wall (401, 403) never lead to another, nor does a setting of
 *   one era lead to the other.
 */
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import type { McpProtocolSetting } from '../../config/schema.ts';

export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** What a 2026-07-28-only server refuses a 2025-era `initialize` with: unsupported version, header mismatch, no such method. */
const MODERN_REFUSALS = new Set([-32022, -32020, -32601]);

/** The SDK's negotiation mode for a `protocolVersion` setting. */
export function negotiationMode(setting: McpProtocolSetting | undefined): VersionNegotiationMode {
  if (setting === '2025-11-25') return 'legacy';
  if (setting === '2026-07-28') return { pin: MODERN_PROTOCOL_VERSION };
  return 'auto';
}

export const isModernVersion = (version: unknown): boolean =>
  typeof version === 'string' && version >= MODERN_PROTOCOL_VERSION;

/**
 * Watches one attempt's inbound messages for the answer to `initialize` (set as the transport's `onmessage`
 * before `connect`: the SDK chains a handler found there). `answeredModern` says whether the server answered
 * it with a 2026-07-28 (or later) `protocolVersion`, which the SDK refuses without a code.
 */
export function initializeWitness(): { onmessage: (message: unknown) => void; answeredModern(): boolean } {
  let modern = false;
  return {
    onmessage(message) {
      const result = (message as { result?: { protocolVersion?: unknown; serverInfo?: unknown } } | null)?.result;
      if (result && result.serverInfo !== undefined && isModernVersion(result.protocolVersion)) modern = true;
    },
    answeredModern: () => modern,
  };
}

/** The JSON-RPC error code an HTTP error's body carries, if it is a JSON-RPC error response. */
function bodyErrorCode(error: SdkHttpError): number | undefined {
  const text = (error.data as { text?: unknown } | undefined)?.text;
  if (typeof text !== 'string') return undefined;
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } } | null)?.error?.code;
    return typeof code === 'number' ? code : undefined;
  } catch {
    return undefined;
  }
}

const httpStatus = (error: unknown): number | undefined =>
  error instanceof SdkHttpError ? (error.data as { status?: number } | undefined)?.status : undefined;

/** The server refused the 2025-era `initialize` the way a 2026-07-28-only server does. */
export function refusedAsModern(error: unknown, answeredModern: boolean): boolean {
  if (answeredModern) return true;
  if (error instanceof ProtocolError) return MODERN_REFUSALS.has(error.code);
  if (error instanceof SdkHttpError) {
    const status = httpStatus(error);
    const code = bodyErrorCode(error);
    return status !== undefined && status >= 400 && status < 500 && code !== undefined && MODERN_REFUSALS.has(code);
  }
  return false;
}

const isAuthWall = (error: unknown): boolean =>
  error instanceof UnauthorizedError || httpStatus(error) === 401 || httpStatus(error) === 403;

export type Attempt = { mode: VersionNegotiationMode; transport: 'main' | 'sse' };

export interface FailedAttempt {
  /** The server's `protocolVersion` setting. */
  setting: McpProtocolSetting;
  attempt: Attempt;
  error: unknown;
  /** The server answered `initialize` with a 2026-07-28 `protocolVersion` (initializeWitness). */
  answeredModern: boolean;
  /** A stdio child that went away on its own during the attempt. */
  childGone: boolean;
  aborted: boolean;
  /** `http` (Streamable HTTP, then SSE) or `stdio`. */
  type: 'http' | 'stdio';
}

/** The attempt to make after `failed`, or `undefined` when its error is the answer (see the contracts). */
export function nextAttempt(failed: FailedAttempt, tried: readonly Attempt[]): Attempt | undefined {
  const { attempt, error } = failed;
  if (failed.aborted || isAuthWall(error) || (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout))
    return undefined;
  const untried = (next: Attempt) => (tried.some((a) => JSON.stringify(a) === JSON.stringify(next)) ? undefined : next);
  const auto = failed.setting === 'auto';
  const pinned = typeof attempt.mode === 'object';
  if (auto && !pinned && attempt.transport === 'main' && refusedAsModern(error, failed.answeredModern))
    return untried({ mode: { pin: MODERN_PROTOCOL_VERSION }, transport: 'main' });
  if (
    auto &&
    attempt.mode === 'auto' &&
    ((error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed) || failed.childGone)
  ) {
    return untried({ mode: 'legacy', transport: 'main' });
  }
  const status = httpStatus(error);
  const http4xx = status !== undefined && status >= 400 && status < 500;
  if (failed.type === 'http' && !pinned && attempt.transport === 'main' && http4xx && !refusedAsModern(error, false))
    return untried({ mode: 'legacy', transport: 'sse' });
  return undefined;
}
