/** `fetch` that sends `Authorization: Bearer <key>` with every request (for SDK clients that take a `fetchImpl`). */
export const bearerFetch =
  (key: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('Authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
