/**
 * REST calls of the chaos run: JSON in and out, each bounded by a timeout (an instance may be paused or killed
 * mid-request), never throwing: a refused connection, a reset or a timeout is `status: 0` with `error`.
 */
export interface Answer {
  status: number;
  /** The parsed JSON (undefined when empty or not JSON); callers say what shape they read. */
  body: unknown;
  text: string;
  error?: string;
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  options: { timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<Answer> {
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      headers: { ...(body !== undefined && { 'Content-Type': 'application/json' }), ...options.headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  } catch (e) {
    return { status: 0, body: undefined, text: '', error: e instanceof Error ? e.message : String(e) };
  }
}
