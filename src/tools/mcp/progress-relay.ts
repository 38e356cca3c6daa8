/**
 * Progress of tool calls, relayed in order. The SDK hands a notification to its handler a microtask
 * late but settles the response at once, so the last `notifications/progress` before a result is
 * lost when the SDK routes it. agentd therefore sends its own progress token and takes the
 * notifications carrying it off the transport before the SDK sees them, synchronously and in order.
 *
 * Contracts:
 * - `attach` wraps the transport's `onmessage` (call it after `connect`); messages that are not
 *   progress for a registered token pass on untouched.
 * - `begin` registers a call: its token (unique within the connection), and a `timer` that aborts
 *   the call's signal after `timeout` ms; with `resetOnProgress` each progress restarts it (the
 *   overall bound is the SDK's `timeout` option, which the caller sets). `end` unregisters and
 *   clears the timer; `timedOut` says whether this timer aborted the call.
 */
import type { Progress, Transport } from '@modelcontextprotocol/client';

export interface ProgressCall {
  token: string;
  signal: AbortSignal;
  timedOut(): boolean;
  end(): void;
}

const PREFIX = 'agentd-';

export function createProgressRelay() {
  const calls = new Map<string, (p: Progress) => void>();
  let next = 0;
  return {
    attach(transport: Transport): void {
      const inner = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const m = message as {
          method?: unknown;
          params?: { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown };
        };
        if (
          m.method === 'notifications/progress' &&
          typeof m.params?.progressToken === 'string' &&
          typeof m.params.progress === 'number'
        ) {
          const deliver = calls.get(m.params.progressToken);
          if (deliver) {
            const { progress, total, message: text } = m.params;
            deliver({
              progress,
              ...(typeof total === 'number' && { total }),
              ...(typeof text === 'string' && { message: text }),
            });
            return;
          }
          if (m.params.progressToken.startsWith(PREFIX)) return; // a late one for a call that ended
        }
        inner?.(message, extra);
      };
    },
    begin(options: {
      timeout: number;
      resetOnProgress: boolean;
      signal?: AbortSignal | undefined;
      onProgress?: ((p: Progress) => void) | undefined;
    }): ProgressCall {
      const token = `${PREFIX}${++next}`;
      const controller = new AbortController();
      let expired = false;
      const onAbort = () => controller.abort(options.signal?.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) onAbort();
      const arm = () =>
        setTimeout(() => {
          expired = true;
          controller.abort(new Error('timeout'));
        }, options.timeout);
      let timer = options.resetOnProgress ? arm() : undefined;
      calls.set(token, (p) => {
        if (timer !== undefined && !expired) {
          clearTimeout(timer);
          timer = arm();
        }
        options.onProgress?.(p);
      });
      return {
        token,
        signal: controller.signal,
        timedOut: () => expired,
        end() {
          calls.delete(token);
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
        },
      };
    },
  };
}
