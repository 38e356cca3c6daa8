/** Starts each key's tasks in order, each once the one before finished or yielded (the next event-loop turn). */
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
