/**
 * One error for everything the client reports: the server's error envelope (`{ success: false, error: { code,
 * message, details }, timestamp }`, docs/api.md) read into `status`, `code`, `message`, `details`; a refusal
 * without one (a proxy's page) as `HTTP_<status>`; a request that never got an answer as `NETWORK_ERROR` (status 0);
 * bad input to the client itself as `CLIENT_INPUT` (status 0, nothing was sent).
 */
export class AgentdError extends Error {
  override readonly name = 'AgentdError';
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
    retryAfter?: number,
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }
}

/** Bad input to the client: thrown before anything is sent. */
export const inputError = (message: string, details: Record<string, unknown> = {}): AgentdError =>
  new AgentdError(0, 'CLIENT_INPUT', message, details);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `Retry-After` in seconds (delta-seconds or an HTTP date); undefined without a readable one. */
export function retryAfterOf(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** The error of a refused answer: its envelope when it has one. */
export function errorOfAnswer(status: number, text: string, retryAfter?: number): AgentdError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const error = isRecord(parsed) ? parsed.error : undefined;
  if (isRecord(error) && typeof error.code === 'string') {
    const message = typeof error.message === 'string' ? error.message : error.code;
    return new AgentdError(status, error.code, message, isRecord(error.details) ? error.details : {}, retryAfter);
  }
  const excerpt = text.slice(0, 200);
  return new AgentdError(status, `HTTP_${status}`, `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`, {}, retryAfter);
}

/** An error event of a stream (`{ event: 'error', data: { code, message, details } }`) as an AgentdError. */
export function errorOfFrame(data: Record<string, unknown>): AgentdError {
  const code = typeof data.code === 'string' ? data.code : 'AGENT_ERROR';
  return new AgentdError(
    0,
    code,
    typeof data.message === 'string' ? data.message : code,
    isRecord(data.details) ? data.details : {},
  );
}
