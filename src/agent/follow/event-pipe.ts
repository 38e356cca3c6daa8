/**
 * Pushed events as an async iterable (what the SSE writer pulls from, at its own pace). `pipeEvents` awaits
 * `open(push, end)` first (its error rejects, so the caller can still answer with a plain error), then yields every
 * pushed event in order until `end()` or `signal` aborts, and calls the `close` that `open` returned exactly once when
 * the iteration stops (end, abort, or the consumer returning early) or `signal` aborts, iterated or not (a client
 * gone before its stream started). Unpulled events wait in memory: a followed turn's are few and small.
 */
export async function pipeEvents<T>(
  signal: AbortSignal,
  open: (push: (event: T) => void, end: () => void) => Promise<() => void>,
): Promise<AsyncIterable<T>> {
  const queue: T[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  const push = (event: T) => {
    if (ended) return;
    queue.push(event);
    poke();
  };
  const end = () => {
    ended = true;
    poke();
  };
  const close = await open(push, end);
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    end();
    close();
  };
  if (signal.aborted) finish();
  else signal.addEventListener('abort', finish, { once: true });
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          const next = queue.shift();
          if (next !== undefined) {
            yield next;
            continue;
          }
          if (ended || signal.aborted) return;
          await new Promise<void>((r) => (wake = r));
        }
      } finally {
        finish();
      }
    },
  };
}
