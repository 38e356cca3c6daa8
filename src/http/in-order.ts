/**
 * Runs each key's tasks in the order they came, each once the one before it finished or waits on I/O
 * (from the next turn of the event loop on; a slow task does not hold the ones after it longer).
 * The WebSocket gateway starts a connection's frames so: what a frame does before it waits on anything
 * (subscribing, unsubscribing) happens before the next frame's, however the engine delivers them.
 */
export function inOrder<Key extends object>(): (key: Key, task: () => Promise<void>) => void {
  const last = new WeakMap<Key, Promise<void>>();
  return (key, task) => {
    const before = last.get(key) ?? Promise.resolve();
    const turn = before.then(
      () =>
        new Promise<void>((resolve) => {
          const yielded = setImmediate(resolve);
          void task().finally(() => {
            clearImmediate(yielded);
            resolve();
          });
        }),
    );
    last.set(key, turn);
  };
}
