/**
 * Which protocol era a tool server speaks: the modes of `mcpServers.<name>.protocolVersion` and the attempt after a
 * failed one, decided from error codes and structured fields only, never an error's text
 * (test/unit/mcp-client-attempts.test.ts).
 * - `auto` probes with `server/discover`; `2025-11-25` is the SDK's `legacy`, `2026-07-28` its `pin`.
 * - `nextAttempt` under `auto`: the 2026-07-28 era when the 2025 `initialize` was refused with -32022, -32020 or
 *   -32601 (also in an HTTP 4xx body) or answered with a 2026-07-28 version; the 2025 era after a failed probe
 *   (`EraNegotiationFailed`) or a stdio child that went away. Under `auto` and `2025-11-25`: SSE after a 2025-era
 *   Streamable HTTP attempt refused with another 4xx. Otherwise none: not after an abandoned attempt, a timeout or
 *   a sign-in wall (401, 403), nor from one pinned era to the other.
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

const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** A 2026-07-28-only server's refusals of a 2025 `initialize`: unsupported version, header mismatch, no such method. */
const MODERN_REFUSALS = new Set([-32022, -32020, -32601]);

/** The SDK's negotiation mode for a `protocolVersion` setting. */
export function negotiationMode(setting: McpProtocolSetting | undefined): VersionNegotiationMode {
  if (setting === '2025-11-25') return 'legacy';
  if (setting === '2026-07-28') return { pin: MODERN_PROTOCOL_VERSION };
  return 'auto';
}

const isModernVersion = (version: unknown): boolean =>
  typeof version === 'string' && version >= MODERN_PROTOCOL_VERSION;

/** Set as `onmessage` before `connect` (the SDK chains it): did the server answer `initialize` as 2026-07-28+? */
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

/** The attempt to make after `failed`, or `undefined` when its error is the answer. */
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
