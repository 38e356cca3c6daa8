/**
 * Where agentd is and the API key the page sends. The build's defaults (`VITE_AGENTD_URL`,
 * `VITE_AGENTD_KEY`, else agent.yml's address and key) can be overridden per visit with
 * `?agentd=<url>&key=<key>`.
 */
export interface Connection {
  /** agentd's base URL, no trailing slash, e.g. http://127.0.0.1:3001 */
  url: string;
  key: string;
}

const DEFAULT_URL = import.meta.env.VITE_AGENTD_URL ?? 'http://127.0.0.1:3001';
const DEFAULT_KEY = import.meta.env.VITE_AGENTD_KEY ?? 'example-key-0123456789abcdef';

export function readConnection(search: string): Connection {
  const query = new URLSearchParams(search);
  return {
    url: (query.get('agentd') ?? DEFAULT_URL).replace(/\/+$/, ''),
    key: query.get('key') ?? DEFAULT_KEY,
  };
}
