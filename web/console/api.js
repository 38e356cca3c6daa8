// @ts-check
// The console's REST calls: with the API key (when one is set) as `Authorization: Bearer`.
import { apiKey } from './live.js';

/** An error answer of the service, with its envelope's code. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{ message?: string, code?: string } | undefined} error
   */
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? 'INTERNAL_ERROR';
  }
}

/** The request headers: the key, when one is set. @returns {Record<string, string>} */
const authorization = () => (apiKey.get() ? { Authorization: `Bearer ${apiKey.get()}` } : {});

/**
 * GETs a route that answers text (an MCP App's html); rejects with ApiError.
 * @param {string} path
 * @returns {Promise<string>}
 */
export async function getText(path) {
  const res = await fetch(path, { headers: authorization() });
  if (res.ok) return res.text();
  const json = /** @type {any} */ (await res.json().catch(() => ({})));
  throw new ApiError(res.status, json?.error);
}

/**
 * Calls a REST route; resolves with the JSON body, rejects with ApiError.
 * @template [T=any]
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function call(method, path, body) {
  const headers = authorization();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const json = /** @type {any} */ (await res.json().catch(() => ({})));
  if (!res.ok) throw new ApiError(res.status, json?.error);
  return json;
}
