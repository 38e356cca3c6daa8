/**
 * Progress of tool calls, relayed in order. Why: the SDK hands a notification to its handler a microtask late but
 * settles the response at once, so the last progress before a result would be lost; agentd sends its own token and
 * takes those notifications off the transport first.
 * - `attach` wraps the transport's `onmessage` (after `connect`); other messages pass on untouched.
 * - `begin` registers a call (a token unique within the connection) and a timer aborting its signal after `timeout`
 *   ms, restarted by each progress with `resetOnProgress` (the overall bound is the SDK's own `timeout`). `end`
 *   unregisters; `timedOut` says whether that timer aborted the call.
 */
import type { Progress, Transport } from '@modelcontextprotocol/client';

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
    }) {
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
