/** What a promise rejected with (undefined when it resolved), to assert on a failure's shape. */
export const failureOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );
