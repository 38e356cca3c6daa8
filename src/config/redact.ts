/**
 * The one redaction of every output (logs, errors, events, records). Every occurrence of a known secret
 * (from the config's models, keys and tool servers, or added at runtime), and of its base64 form, becomes
 * `[REDACTED]`; URL userinfo, secret-named query values and provider-style keys are redacted by pattern. `deep`
 * redacts every string of a JSON-like value. A value is learned as a secret only when it could be one: never one
 * shorter than MIN_SECRET, a host name or an address (a URL's `user@127.0.0.1` must not hide every later
 * `127.0.0.1`).
 */
import { isIP } from 'node:net';
import type { AgentConfig, McpServerConfig } from './schema.ts';

export const REDACTED = '[REDACTED]';

/** Values shorter than this are never learned (they would mangle ordinary text, and guard nothing). */
export const MIN_SECRET = 8;
/** A DNS name with a top-level label, with an optional port. */
const HOST_NAME = /^(?:[a-z0-9-]{1,63}\.)+[a-z]{2,24}(?::\d{1,5})?$/i;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s?#]+@/gi;
const QUERY_SECRET = /([?&][^=&#\s]*(?:key|token|secret|password|passwd|auth|sig)[^=&#\s]*=)[^&#\s"']+/gi;
/** Provider-style keys: `sk-…`, `sk_live_…`, `ghp_…`, `xoxb-…`, AWS access key ids. */
const KEY_SHAPED =
  /\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_]|proj[-_]|ant[-_])?[A-Za-z0-9_-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abpr]-[A-Za-z0-9-]{10,}|\bAKIA[0-9A-Z]{16}\b/g;
/** Args that name a secret: `--api-key=VALUE`, `--token VALUE` (the value is the next arg). */
const SECRET_FLAG = /^--?[a-z0-9-]*(?:key|token|secret|password|passwd|credential)[a-z0-9-]*$/i;

/** A URL's user name and password (a proxy's credentials), decoded. */
function userinfoOf(url: URL): string[] {
  return [url.password, url.username].filter((v) => v !== '').map(decodeURIComponent);
}

/** A value that names a host (an address or a DNS name, a port maybe), not a secret. */
const hostLike = (value: string) =>
  HOST_NAME.test(value) || isIP(value.replace(/^\[(.*)\](?::\d+)?$/, '$1').replace(/^([\d.]+):\d+$/, '$1')) !== 0;

/** The base64 forms a secret may be printed in: standard and URL-safe, padded and not (a longer one matches first). */
const base64Forms = (secret: string) => {
  const b64 = Buffer.from(secret).toString('base64');
  const url = Buffer.from(secret).toString('base64url');
  return [b64, b64.replace(/=+$/, ''), url, `${url}${b64.slice(url.length)}`];
};

/** The secrets a tool server's config holds. */
function secretsOfServer(server: McpServerConfig): string[] {
  if (server.type === 'http') {
    const oauth = server.oauth;
    const found = [
      ...Object.values(server.headers),
      ...[oauth?.clientSecret, oauth?.privateKey].filter((v) => v !== undefined),
    ];
    try {
      const url = new URL(server.baseUrl);
      found.push(...userinfoOf(url));
      if (url.password) found.push(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`); // Basic auth's pair (base64 learned below)
      for (const [name, value] of url.searchParams)
        if (/key|token|secret|password|auth|sig/i.test(name)) found.push(value);
    } catch {
      // not a URL: nothing more to find
    }
    if (server.proxy) found.push(...userinfoOf(new URL(server.proxy)));
    return found;
  }
  const found = [...Object.values(server.env)];
  server.args.forEach((arg, i) => {
    const eq = arg.indexOf('=');
    if (eq > 0 && SECRET_FLAG.test(arg.slice(0, eq))) found.push(arg.slice(eq + 1));
    else if (SECRET_FLAG.test(arg) && server.args[i + 1] !== undefined) found.push(server.args[i + 1] as string);
  });
  return found;
}

export function createRedactor(
  config?: Pick<AgentConfig, 'llm' | 'server' | 'mcpServers'> & Partial<Pick<AgentConfig, 'webhooks'>>,
) {
  const secrets = new Set<string>();
  // Longest first, so a secret that contains another is replaced whole.
  let ordered: string[] = [];
  const addSecret = (secret: string | undefined) => {
    if (secret === undefined || secret.length < MIN_SECRET || secrets.has(secret) || hostLike(secret)) return;
    for (const form of [secret, ...base64Forms(secret)]) secrets.add(form);
    ordered = [...secrets].sort((a, b) => b.length - a.length);
  };
  const addServer = (server: McpServerConfig) => secretsOfServer(server).forEach(addSecret);
  if (config) {
    for (const model of [config.llm, ...config.llm.fallback]) {
      addSecret(model.apiKey);
      Object.values(model.headers ?? {}).forEach(addSecret);
    }
    if (config.llm.proxy) userinfoOf(new URL(config.llm.proxy)).forEach(addSecret);
    addSecret(config.server.auth.apiKey);
    addSecret(config.server.auth.adminKey);
    config.server.auth.keys.forEach((k) => addSecret(k.key));
    Object.values(config.mcpServers).forEach(addServer);
    for (const hook of config.webhooks ?? []) {
      addSecret(hook.secret);
      if (hook.proxy) userinfoOf(new URL(hook.proxy)).forEach(addSecret);
    }
  }

  const redact = (text: string): string => {
    let out = text;
    for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out
      .replace(URL_USERINFO, `$1${REDACTED}@`)
      .replace(QUERY_SECRET, `$1${REDACTED}`)
      .replace(KEY_SHAPED, REDACTED);
  };
  const deep = <T>(value: T): T => {
    if (typeof value === 'string') return redact(value) as T;
    if (Array.isArray(value)) return value.map(deep) as T;
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deep(v)])) as T;
    }
    return value;
  };
  return { redact, deep, addSecret, addServer };
}

export type Redactor = ReturnType<typeof createRedactor>;
