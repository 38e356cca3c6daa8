/**
 * Where agentd is and the API key the page sends. agentd's URL comes from `VITE_AGENTD_URL`, which the
 * launcher (`npm start`, tools/ag-ui-example) sets to the agentd it started, or from `?agentd=<url>` per
 * visit; the key from `VITE_AGENTD_KEY`, else agent.yml's sample key, or `?key=<key>`.
 */
export interface Connection {
  /** agentd's base URL, no trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  key: string;
}

const DEFAULT_KEY = import.meta.env.VITE_AGENTD_KEY ?? 'example-key-0123456789abcdef';

/** Thrown when the page was told no agentd: served without the launcher and opened without `?agentd=`. */
export class NoAgentdError extends Error {
  override name = 'NoAgentdError';
}

export function readConnection(search: string): Connection {
  const query = new URLSearchParams(search);
  const url = query.get('agentd') ?? import.meta.env.VITE_AGENTD_URL;
  if (!url)
    throw new NoAgentdError(
      'This page does not know where agentd is: start it with `npm start` (it sets VITE_AGENTD_URL), or add ?agentd=<agentd URL> to its address.',
    );
  return { url: url.replace(/\/+$/, ''), key: query.get('key') ?? DEFAULT_KEY };
}
