/**
 * agentd over stdio that cannot open its agent (its storage folder held by another agentd, say): a desktop MCP client
 * hides stderr, so the reason goes where it looks, the answer to its `initialize`: a JSON-RPC error (the error table's
 * code; `data` the error's details and code) whose message says what to do. Every request is answered so until stdin
 * ends; the process exits 1 once `initialize` has its answer, or stdin ended.
 */
import { createInterface } from 'node:readline';
import { isAppError, toJsonRpc } from '../errors/index.ts';

/** What to do about a storage folder in use, for a client that starts agentd over stdio. */
export function inUseAdvice(details: Record<string, unknown>, configuredUrl: string): string {
  return (
    ` If that agentd serves this agent over HTTP (this file says ${configuredUrl}), connect your MCP client to its ` +
    `/mcp (${configuredUrl}/mcp) instead of starting agentd; else stop process ${String(details.pid)}, or give ` +
    `this agent file a storage.dir of its own.`
  );
}

/** The JSON-RPC error a request `id` is answered with. */
export function refusal(err: unknown, id: string | number, configuredUrl: string) {
  const { body } = toJsonRpc(err);
  const inUse = isAppError(err) && err.details.reason === 'in-use';
  const message = `agentd could not start: ${body.error.message}${inUse ? inUseAdvice(err.details, configuredUrl) : ''}`;
  return { jsonrpc: '2.0' as const, id, error: { ...body.error, message } };
}

/** Answers the client's requests on stdin with `err` (module doc); resolves never: the process exits. */
export function refuseOverStdio(err: unknown, configuredUrl: string): Promise<never> {
  const lines = createInterface({ input: process.stdin });
  const exit = () => process.exit(1);
  lines.on('close', exit);
  lines.on('line', (line) => {
    let request: { id?: unknown; method?: unknown };
    try {
      request = JSON.parse(line) as typeof request;
    } catch {
      return;
    }
    const { id, method } = request;
    if (typeof id !== 'string' && typeof id !== 'number') return; // a notification: nothing to answer
    const answered = method === 'initialize';
    process.stdout.write(`${JSON.stringify(refusal(err, id, configuredUrl))}\n`, () => answered && exit());
  });
  return new Promise<never>(() => undefined);
}
