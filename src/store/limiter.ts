/** Runs at most `max` tasks at once; the others wait in call order. */
export function createLimiter(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
      else active++;
      try {
        return await task();
      } finally {
        const next = waiting.shift();
        if (next)
          next(); // the slot passes straight to the next task
        else active--;
      }
    },
  };
}

export type Limiter = ReturnType<typeof createLimiter>;
